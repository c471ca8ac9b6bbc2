import { createServer, connect, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket } from 'node:tls';

/**
 * A self-signed certificate for localhost and 127.0.0.1, for tests only: clients reach the
 * proxy below with `sslmode=require` (encrypted, the certificate not verified), as the
 * stores a deployment rents often ask. Its key is public: it secures nothing.
 */
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDFnFpbdqzr18uz
KDvyLu3vURcfMlzyxccEKyjWcmlQYz8Vfu7gUzdAQ0R88DmsG1dOLa++90GmNv53
3BXjyTwGhIQfvcFCrtj9uX5las7Yl0PyjZ2flUFlMHsp0CdnqV6UA7fxgyePvUZy
sib7/96BDqudWNbh8eEhUhIJyQP0WMh1HsR4tO+TSF0AfIuVMPNl3FkIOWjY5Yat
VYrogr80U06aYPBqAT88uZuu+gQvi9x8XLzmCMLftzfFCkXNtQc8OQZM7559Dq/R
y0oOem/zUoXhIW0JVaNgzgshtXS/zmaoGQrWfxmheKNGUt7xA6VeJPri3pLZK/Kd
oSUaCWWTAgMBAAECggEAD+wLqb/zqeMO0iYlQlu+pyA5BTX5IESIRxE1LqY0TxpY
DGLYW3HJC2AAJjLy6qefTrjGptPkUcCvmze7+ckOkZXe0XHoHvfYmwT1prVG6lOx
0VrQvvl3NfCEk/dmHWebq8Bq80Y2i1HcWcR5+KcCphJpCHoOglELazRiKLCuJWNX
btZdj0kD91XdkkERZB/ZKaOkULJEOw57bYuG/hemeZxhx4wWmFGhJ59CCFQ28ZTW
8j1JVCAhJ1Eq4+PWmmFkkHg4ENNfT8gkH0Fj+3mu8o6rl8fBjokCNj+zhuHDf2cl
T65ruZTIs+CLIxUWvXdMOehE8NuxbJAVgiLVIwalTQKBgQD9XYNsITURI/WHfu9w
OEsLBIj1YDcbVAByD2dVErNR+anflVzB5PXKSNbpWITh9WjvKxlsGLpH4dqJgAfO
XqhcU7qDe7163v/ugRnJK4lYd3FBXSZZbeP6y57kMj4bfb4yiCpRaRZ5ceCgjp+2
rldtAv90nXt2UkpiwX27avkXlwKBgQDHqmow64fCTJ6vlrTBtqwCJeX+7BJBoDQB
1FoNhJ+GYLOYeUEQ5xwDni06P3dHIWXUFGJ8MjItva7O8UXtWfX1EL5I+mIBuOTM
1ZO/0gOdbFYZB/nAVAeF9JLEAeYbjxE2GLjRnnIv0zoaih4QmXNX7lU2Uie70hLW
tAEfwiCBZQKBgQCdAmdgCdAd+B++wO3WqDvw7vWEwgREXjEMffk2IimYAlTAJopd
6epbWfo8jsuCT5egpx/Q+h3uT8si7IFp5QUGeiiaNIN+clU90ylMnjs15Ib9z6Dl
SJFAKRElLvGIDctg+zrmSm5QAj8GoHvfNHkfJ/1woesRrvtD6c5l52vHrwKBgBsK
rY8qlxxtnCBT3O9PekRgNaIs/tv8go6s3/VsvN5KQoioA3PymQy0Y5O7/L+Zel0a
1avUcI9ZXU+RxdK7mGA0gFEJ+DQbgoFre7NDElJD1fVV6zFtMAeodCgvyaZ53e7h
skZRm0124iuuARxmbATAtrHAtrjtXrfNcUmH1TcxAoGBAPb9HEaGK52UP0dbI5pV
mbALRokpsZ4SoUP/55lhgedI6GrEWNSYRYKdeUS5wCYutPILkdgGtHegYmCy9OrF
m4I5on77Os7uSOTaVuj+dmAyVfDx5eWx20bdlXQZ55GSrAwq9SzXqMxKQ+rq5k1b
Ct6g+/c9A6GgIGiqDaLxO1CJ
-----END PRIVATE KEY-----`;
const TEST_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIDJzCCAg+gAwIBAgIUX6DMQzUqGlqMAGYpeOIUBLpnqmUwDQYJKoZIhvcNAQEL
BQAwFDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMjA4Mzk1MFoYDzIxMjYx
MTA4MDgzOTUwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwggEiMA0GCSqGSIb3DQEB
AQUAA4IBDwAwggEKAoIBAQDFnFpbdqzr18uzKDvyLu3vURcfMlzyxccEKyjWcmlQ
Yz8Vfu7gUzdAQ0R88DmsG1dOLa++90GmNv533BXjyTwGhIQfvcFCrtj9uX5las7Y
l0PyjZ2flUFlMHsp0CdnqV6UA7fxgyePvUZysib7/96BDqudWNbh8eEhUhIJyQP0
WMh1HsR4tO+TSF0AfIuVMPNl3FkIOWjY5YatVYrogr80U06aYPBqAT88uZuu+gQv
i9x8XLzmCMLftzfFCkXNtQc8OQZM7559Dq/Ry0oOem/zUoXhIW0JVaNgzgshtXS/
zmaoGQrWfxmheKNGUt7xA6VeJPri3pLZK/KdoSUaCWWTAgMBAAGjbzBtMB0GA1Ud
DgQWBBSRzzYOLcb2qgkFbX8DJhxM7Av/SzAfBgNVHSMEGDAWgBSRzzYOLcb2qgkF
bX8DJhxM7Av/SzAPBgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGCCWxvY2FsaG9z
dIcEfwAAATANBgkqhkiG9w0BAQsFAAOCAQEAJ9V+Y85CjFMnggnXwCFhhtCQn6WM
UuH9rgehciJPzS2lleSvFQrnpU4yV7pQhtd8deZRnzKbiotyebwastOux/zMv/gh
CO4e5NXi54+ldfjzoQ5Wd3G01n8iDW56au61j1X7wzfMlh66erbjcne+qKX8HV1Q
qhWG0Uao1ZWMVao33R4BIn3BbCs1MmTzDj6D8Rab2kc5+qWvw7KQkRLmXQfFC3Jt
iwHh+F8hAYAlY3kGUVDrCsa8/zUINx+oecVE4Mu+nYj1ye0M/25mucoQ7Fsopc4B
PaAnKwqcwtg8C5CrGQcga5PLg87rhO75PnlvRZZiIeZMPwvrIvSLHznYZg==
-----END CERTIFICATE-----`;

/** Postgres's SSLRequest code (its first message's bytes 4-8; the length, 8, first). */
const SSL_REQUEST_CODE = 80877103;

/**
 * A loopback proxy that speaks Postgres over TLS to its clients and passes the protocol on
 * in the clear to `target` (a Postgres server, or a TcpProxy in front of one to stall the
 * path): as a TLS-terminating pooler or load balancer would, so a test reaches real
 * Postgres through TLS although the machine's server has it off. A client that does not
 * ask for TLS is passed on as it is. `secured` counts the TLS sessions made.
 */
export interface PostgresTlsProxy {
  readonly port: number;
  readonly secured: number;
  close(): Promise<void>;
}

export async function startPostgresTlsProxy(target: { host: string; port: number }): Promise<PostgresTlsProxy> {
  const secureContext = createSecureContext({ key: TEST_KEY, cert: TEST_CERTIFICATE });
  const sockets = new Set<Socket>();
  let secured = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  /** Both ways between the client's (clear) side and the target, each closing the other. */
  const join = (client: Socket, upstream: Socket) => {
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  const server: Server = createServer((client) => {
    track(client);
    let first = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      first = Buffer.concat([first, chunk]);
      if (first.length < 8) return;
      client.off('data', onData);
      client.pause();
      const upstream = connect(target.port, target.host);
      track(upstream);
      if (first.readInt32BE(0) === 8 && first.readInt32BE(4) === SSL_REQUEST_CODE) {
        // The client waits for the answer before it sends anything more.
        client.write('S');
        const tls = new TLSSocket(client, { isServer: true, secureContext });
        tls.once('secure', () => secured++);
        join(tls, upstream);
      } else {
        upstream.write(first);
        join(client, upstream);
        client.resume();
      }
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    get secured() {
      return secured;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
