import { useState } from 'preact/hooks';
import { ApiFailure, api, unwrap, type Link } from '../api.ts';
import { session } from '../session.ts';

/** Copy the short URL and download its QR code; a small status says what happened. */
export function LinkActions({ link }: { link: Link }) {
  const [status, setStatus] = useState('');

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
    setStatus(`Making the ${format.toUpperCase()}…`);
    try {
      const { data } = await unwrap(api.POST('/qr', { body: { linkId: link.id, format, size: 1024 } }));
      const a = document.createElement('a');
      a.href = data.dataUri;
      a.download = `${link.shortCode}-qr.${format}`;
      document.body.append(a);
      a.click();
      a.remove();
      setStatus(`QR code ${format.toUpperCase()} downloaded`);
    } catch (err) {
      setStatus(err instanceof ApiFailure ? `QR code failed: ${err.message}` : String(err));
    }
  }

  return (
    <span class="link-actions">
      <button type="button" onClick={copy} aria-label={`Copy short URL ${link.shortUrl}`}>
        Copy
      </button>
      {session.can('qr:write') && (
        <>
          <button type="button" onClick={() => qr('png')} aria-label={`QR PNG of /${link.shortCode}: download`}>
            QR PNG
          </button>
          <button type="button" onClick={() => qr('svg')} aria-label={`QR SVG of /${link.shortCode}: download`}>
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
