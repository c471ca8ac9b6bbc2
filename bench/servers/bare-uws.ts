/**
 * Baseline for the redirect benchmark: uWebSockets.js answering every request with the
 * same 302 (Location and Cache-Control, the least a real redirect carries). With
 * BARE_SET_COOKIE=1 it also writes a fixed Set-Cookie of a visitor cookie's length: the
 * floor breakdown's measure of what the header itself costs on the wire. Prints
 * `READY <port>` once listening; exits on SIGTERM.
 */
import uWS from 'uWebSockets.js';
import { visitorCookie } from '../../shared/visitor.ts';

const cookie = process.env.BARE_SET_COOKIE === '1' ? visitorCookie('A'.repeat(22)) : null;
const app = uWS.App();
app.any('/*', (res) => {
  res.writeStatus('302 Found').writeHeader('Location', 'https://example.com/landing').writeHeader('Cache-Control', 'no-store');
  if (cookie !== null) res.writeHeader('Set-Cookie', cookie);
  res.end();
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    console.error('bare-uws: could not listen');
    process.exit(1);
  }
  process.stdout.write(`READY ${uWS.us_socket_local_port(socket as unknown as uWS.us_socket)}\n`);
  process.once('SIGTERM', () => {
    uWS.us_listen_socket_close(socket);
    process.exit(0);
  });
});
