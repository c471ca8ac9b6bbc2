import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, api, fetchBlob, unwrap, type Link, type QrCode, type QrCreate, type QrListItem } from '../api.ts';
import { fmtDateTime, fmtInt, linkName } from '../format.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';
import { ErrorBox } from './error-box.tsx';
import { ErrorSummary, FieldError, invalidProps, problemsOf, unreadNumbers, type FieldMap } from './field-errors.tsx';
import { Pager } from './pager.tsx';
import { TableScroll } from './table-scroll.tsx';

type QrLink = Pick<Link, 'id' | 'shortCode' | 'shortUrl' | 'domainId' | 'redirectDomain'>;
type QrFormat = QrListItem['format'];
type ErrorCorrection = QrListItem['errorCorrection'];

/** How much of a code may be damaged or covered (by a logo, say) and still scan, by error-correction level. */
const recoverable: Record<ErrorCorrection, number> = { L: 7, M: 15, Q: 25, H: 30 };
const levels = Object.keys(recoverable) as ErrorCorrection[];
const describeLevel = (level: ErrorCorrection) => `${level} (${recoverable[level]} %)`;

const describeCode = (code: QrListItem) => `${code.format.toUpperCase()}, ${fmtInt(code.size)} px`;

function save(url: string, link: QrLink, format: QrFormat): void {
  const a = document.createElement('a');
  a.href = url;
  // Named as the link is (a custom domain's host first), so two links of one code on two domains download apart.
  a.download = `${linkName(link).replace(/^\//, '').replace('/', '-')}-qr.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
}

/** Downloads a code: one just made carries its image; a stored one is fetched from its imageUrl (a request against the hourly quota). */
export async function downloadQr(link: QrLink, code: QrCode | QrListItem): Promise<void> {
  if ('dataUri' in code) return save(code.dataUri, link, code.format);
  const url = URL.createObjectURL(await fetchBlob(code.imageUrl));
  save(url, link, code.format);
  // The download has taken the blob by then.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** What the QR PNG and QR SVG buttons make: a print-size code, the API's other defaults spelled out so a stored one can be recognised. */
const quick = { size: 1024, margin: 2, foreground: '#000000', background: '#ffffff', errorCorrection: 'M' } as const;

/**
 * Downloads the link's quick code of `format`. Each POST stores a record, so a code the
 * link already has is downloaded instead when it looks the same and is `current` (it
 * encodes what a code made now would: not after the link moved to another domain or the
 * QR marker changed). Resolves to whether a code was made.
 */
export async function downloadQuickQr(link: QrLink, format: QrFormat): Promise<boolean> {
  // Newest first, a whole page (100 at most): a match further back only costs one record more.
  const { data } = await unwrap(api.GET('/qr/{linkId}', { params: { path: { linkId: link.id }, query: { limit: 100 } } }));
  const stored = data.find(
    (c) =>
      c.format === format &&
      c.size === quick.size &&
      c.margin === quick.margin &&
      c.foreground === quick.foreground &&
      c.background === quick.background &&
      c.errorCorrection === quick.errorCorrection &&
      c.current,
  );
  if (stored) {
    await downloadQr(link, stored);
    return false;
  }
  await downloadQr(link, (await unwrap(api.POST('/qr', { body: { linkId: link.id, format, ...quick } }))).data);
  return true;
}

/** A colour as a square of it and its hex (the square alone says nothing to a screen reader, the hex little to most people). */
function Colour({ hex }: { hex: string }) {
  return (
    <>
      <span aria-hidden="true" class="swatch" style={{ background: hex }} />
      <code>{hex}</code>
    </>
  );
}

const PAGE_SIZE = 10;

/**
 * The link's QR codes, newest first, each downloadable, and (with qr:write) a form for a
 * code of any look the API makes. `made` counts codes the page's quick buttons made:
 * each change lists them. Its page is its own, not the address's: the link page's query
 * is its analytics (what the other views carry), and a range or filter change would
 * send a `page` there back to 1.
 */
export function QrCodesSection({ link, made }: { link: QrLink; made: number }) {
  const [page, setPage] = useState(1);
  const codes = useLoad((signal) => unwrap(api.GET('/qr/{linkId}', { params: { path: { linkId: link.id }, query: { page, limit: PAGE_SIZE } }, signal })), [link.id, page, made]);
  const [status, setStatus] = useState('');
  const [failure, setFailure] = useState<ApiFailure | undefined>();
  // What the form made: shown from its answer's image, as fetching a stored one costs a request of the quota.
  const [latest, setLatest] = useState<QrCode | null>(null);

  async function download(code: QrListItem) {
    setFailure(undefined);
    setStatus(`Downloading the ${code.format.toUpperCase()}…`);
    try {
      await downloadQr(link, code);
      setStatus(`QR code ${code.format.toUpperCase()} downloaded`);
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      setStatus('');
      setFailure(err);
    }
  }

  function created(code: QrCode) {
    setFailure(undefined);
    setStatus(`QR code ${describeCode(code)} made and downloaded`);
    setLatest(code);
    // The new code is the newest: on the first page.
    if (page > 1) setPage(1);
    else codes.reload();
  }

  return (
    <section class="qr-codes" aria-labelledby="qr-title">
      <div class="section-header">
        <h2 id="qr-title">QR codes</h2>
        <span class="muted" role="status">
          {status}
        </span>
      </div>
      <p class="muted">Each encodes the short URL marked as a scan (source qr in the analytics). Download one again rather than making another.</p>
      {codes.error && <ErrorBox error={codes.error} onRetry={codes.reload} />}
      {failure && <ErrorBox error={failure} />}
      {codes.data && (
        <>
          <TableScroll label="QR codes of this link, newest first">
            <table>
              <caption class="visually-hidden">QR codes of this link, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Format</th>
                  <th scope="col" class="num">
                    Size
                  </th>
                  <th scope="col" class="num">
                    Margin <span class="muted">(modules)</span>
                  </th>
                  <th scope="col">Foreground</th>
                  <th scope="col">Background</th>
                  <th scope="col" title="Share of the code that may be damaged or covered and still scan">
                    Error correction
                  </th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {codes.data.data.length === 0 && (
                  <tr>
                    <td colSpan={8} class="muted">
                      No QR codes yet.
                    </td>
                  </tr>
                )}
                {codes.data.data.map((code) => (
                  <tr key={code.id} data-qr-id={code.id}>
                    <td>{code.format.toUpperCase()}</td>
                    <td class="num">{fmtInt(code.size)} px</td>
                    <td class="num">{code.margin}</td>
                    <td>
                      <Colour hex={code.foreground} />
                    </td>
                    <td>
                      <Colour hex={code.background} />
                    </td>
                    <td>{describeLevel(code.errorCorrection)}</td>
                    <td>{fmtDateTime(code.createdAt)}</td>
                    <td>
                      <button type="button" onClick={() => download(code)} aria-label={`Download QR code ${describeCode(code)}, created ${fmtDateTime(code.createdAt)}`}>
                        Download
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          {(codes.data.pagination.totalPages ?? 1) > 1 && <Pager pagination={codes.data.pagination} label="QR codes" onPage={setPage} />}
        </>
      )}
      <div class="cards">
        {session.can('qr:write') && <NewQrForm link={link} onCreated={created} />}
        {latest && <Made code={latest} />}
      </div>
    </section>
  );
}

/** The code the form just made, from the image its answer carries. */
function Made({ code }: { code: QrCode }) {
  return (
    <figure class="card">
      <figcaption>
        Made: {describeCode(code)}, {describeLevel(code.errorCorrection)}
      </figcaption>
      <img src={code.dataUri} width={160} height={160} alt={`QR code encoding ${code.encodedUrl}`} />
    </figure>
  );
}

interface Draft {
  format: QrFormat;
  size: string;
  margin: string;
  foreground: string;
  background: string;
  errorCorrection: ErrorCorrection;
}

/** The API's defaults. */
const blank: Draft = { format: 'png', size: '512', margin: '2', foreground: '#000000', background: '#ffffff', errorCorrection: 'M' };

/** The visible label of each field, by the API's name for it; each control's id is `qr-` and that name. */
const labels: Record<keyof Draft, string> = {
  format: 'Format',
  size: 'Size (px, 64–2048)',
  margin: 'Margin (modules, 0–16)',
  foreground: 'Foreground',
  background: 'Background',
  errorCorrection: 'Error correction',
};
const fields: FieldMap = { ...Object.fromEntries(Object.entries(labels).map(([name, label]) => [name, { id: `qr-${name}`, label }])), linkId: { id: null, label: 'Link' } };

function NewQrForm({ link, onCreated }: { link: QrLink; onCreated(code: QrCode): void }) {
  const [draft, setDraft] = useState(blank);
  const action = useAction(() => {});
  const saving = action.busy !== null;
  const error = action.error;
  const problems = problemsOf(error, fields);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const field = (name: keyof Draft, control: (props: { id: string; value: string } & ReturnType<typeof invalidProps>) => JSX.Element, help?: string) => (
    <div class="field">
      <label for={`qr-${name}`}>{labels[name]}</label>
      {control({ id: `qr-${name}`, value: draft[name], ...invalidProps(problems, `qr-${name}`, help && `qr-${name}-help`) })}
      <FieldError problems={problems} id={`qr-${name}`} />
      {help && (
        <small id={`qr-${name}-help`} class="help">
          {help}
        </small>
      )}
    </div>
  );

  function submit(event: Event) {
    event.preventDefault();
    // The button is aria-disabled while saving, so it keeps focus; a second press does nothing.
    if (saving) return;
    void action.run(async () => {
      const unread = unreadNumbers(fields, { size: {}, margin: {} });
      if (unread) throw unread;
      const body: QrCreate = { ...draft, linkId: link.id, size: Number(draft.size), margin: Number(draft.margin) };
      const { data } = await unwrap(api.POST('/qr', { body }));
      await downloadQr(link, data);
      onCreated(data);
    });
  }

  return (
    // noValidate: the API's answer is shown beside each field, in words, where the browser's bubble would vanish.
    <form onSubmit={submit} noValidate aria-label="New QR code">
      <ErrorSummary error={error} problems={problems} />
      <fieldset>
        <legend>New QR code</legend>
        <div class="field-grid">
          {field('format', (props) => (
            <select {...props} onChange={(e) => set('format', e.currentTarget.value as QrFormat)}>
              <option value="png">PNG</option>
              <option value="svg">SVG</option>
            </select>
          ))}
          {field('size', (props) => <input {...props} type="number" inputMode="numeric" min={64} max={2048} onInput={(e) => set('size', e.currentTarget.value)} />)}
          {field('margin', (props) => <input {...props} type="number" inputMode="numeric" min={0} max={16} onInput={(e) => set('margin', e.currentTarget.value)} />)}
          {field('foreground', (props) => <input {...props} type="color" onInput={(e) => set('foreground', e.currentTarget.value)} />)}
          {field('background', (props) => <input {...props} type="color" onInput={(e) => set('background', e.currentTarget.value)} />)}
          {field(
            'errorCorrection',
            (props) => (
              <select {...props} onChange={(e) => set('errorCorrection', e.currentTarget.value as ErrorCorrection)}>
                {levels.map((level) => (
                  <option key={level} value={level}>
                    {describeLevel(level)}
                  </option>
                ))}
              </select>
            ),
            'How much of the code may be damaged or covered and still scan; more makes a denser code.',
          )}
        </div>
        <div class="actions start">
          <button type="submit" class="primary" aria-disabled={saving ? 'true' : undefined}>
            {saving ? 'Creating…' : 'Create and download'}
          </button>
        </div>
      </fieldset>
    </form>
  );
}
