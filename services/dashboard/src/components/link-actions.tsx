import { useState } from 'preact/hooks';
import { ApiFailure, type Link } from '../api.ts';
import { session } from '../session.ts';
import { downloadQuickQr } from './qr-codes.tsx';
import { linkName } from '../format.ts';
import { isStale } from '../use-load.ts';

/**
 * Copy the short URL and download its QR code; a small status says what happened.
 * `onQrMade`: a new code was stored (a page listing the link's codes shows it).
 * `onStale`: a QR code was refused because the link was deleted or changed elsewhere
 * (404, 409, 410): the view says so and reads the link afresh (its row, and this
 * status with it, may go).
 */
export function LinkActions({ link, onQrMade, onStale }: { link: Link; onQrMade?: () => void; onStale?: (err: ApiFailure) => void }) {
  const [status, setStatus] = useState('');
  // One code at a time: a second click before the first is stored would not find it and make another.
  const [making, setMaking] = useState(false);

  async function copy() {
    // Clipboard access needs a secure context (else there is no navigator.clipboard) and
    // permission (else NotAllowedError): without it, show the URL to copy by hand.
    if (!navigator.clipboard) {
      window.prompt('Copy the short URL', link.shortUrl);
      return;
    }
    try {
      await navigator.clipboard.writeText(link.shortUrl);
      setStatus('Short URL copied');
    } catch (err) {
      if (!(err instanceof DOMException)) throw err;
      window.prompt('Copy the short URL', link.shortUrl);
    }
  }

  async function qr(format: 'png' | 'svg') {
    if (making) return;
    setMaking(true);
    setStatus(`Making the ${format.toUpperCase()}…`);
    try {
      if (await downloadQuickQr(link, format)) onQrMade?.();
      setStatus(`QR code ${format.toUpperCase()} downloaded`);
    } catch (err) {
      setStatus(err instanceof ApiFailure ? `QR code failed: ${err.message}` : String(err));
      if (err instanceof ApiFailure && isStale(err)) onStale?.(err);
    } finally {
      setMaking(false);
    }
  }

  return (
    <span class="link-actions">
      <button type="button" onClick={copy} aria-label={`Copy short URL ${link.shortUrl}`}>
        Copy
      </button>
      {session.can('qr:write') && (
        <>
          <button type="button" onClick={() => qr('png')} aria-disabled={making ? 'true' : undefined} aria-label={`QR PNG of ${linkName(link)}: download`}>
            QR PNG
          </button>
          <button type="button" onClick={() => qr('svg')} aria-disabled={making ? 'true' : undefined} aria-label={`QR SVG of ${linkName(link)}: download`}>
            QR SVG
          </button>
        </>
      )}
      <span class="status" role="status">
        {status}
      </span>
    </span>
  );
}
