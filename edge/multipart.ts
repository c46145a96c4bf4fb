// A strict multipart/form-data parser (RFC 7578 over RFC 2046) for bodies the edge has already
// read into one Buffer (the route's maxBodyBytes caps it). Strict on purpose: CRLF line endings
// only, a declared boundary of legal characters, every part named by a `form-data`
// Content-Disposition, a closing delimiter, bounded part and header counts and sizes, no field
// sent twice, text fields valid UTF-8. Anything else is a 400, never a guess.
import { isUtf8 } from 'node:buffer';
import { AppError } from '../core/errors.js';

export interface MultipartFile {
  /** The form field name. */
  field: string;
  /** The file name as the client sent it (untrusted: never use it as a path). */
  filename: string;
  /** The part's Content-Type, lower-cased without parameters (`application/octet-stream` if absent). */
  contentType: string;
  data: Buffer;
}

export interface MultipartForm {
  fields: Record<string, string>;
  files: MultipartFile[];
}

export interface MultipartLimits {
  /** Most parts (fields and files together). */
  maxParts: number;
  /** Most files. */
  maxFiles: number;
  /** Largest text field, in bytes. */
  maxFieldBytes: number;
  /** Largest header block of one part, in bytes. */
  maxHeaderBytes: number;
}

export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = { maxParts: 20, maxFiles: 1, maxFieldBytes: 16 * 1024, maxHeaderBytes: 4 * 1024 };

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
/** RFC 2046 bchars: digits, letters and '()+_,-./:=? and space (not last). */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

function bad(message: string): AppError {
  return new AppError('ERR_BAD_REQUEST', [`multipart body: ${message}`]);
}

interface HeaderParam {
  value: string;
  params: Record<string, string>;
}

/**
 * `type/subtype; a=b; c="d e"` → value and lower-cased parameter names. Quoted strings may hold
 * backslash escapes. Throws on anything that does not parse.
 */
export function parseHeaderParams(header: string, what: string): HeaderParam {
  let i = header.indexOf(';');
  const value = (i < 0 ? header : header.slice(0, i)).trim().toLowerCase();
  const params: Record<string, string> = {};
  while (i >= 0 && i < header.length) {
    i++; // past ';'
    while (header[i] === ' ' || header[i] === '\t') i++;
    if (i >= header.length) break; // a trailing ';'
    const eq = header.indexOf('=', i);
    if (eq < 0) throw bad(`${what} has a parameter without a value`);
    const name = header.slice(i, eq).trim().toLowerCase();
    if (!TOKEN.test(name)) throw bad(`${what} has an invalid parameter name`);
    i = eq + 1;
    let v = '';
    if (header[i] === '"') {
      i++;
      for (;;) {
        if (i >= header.length) throw bad(`${what} has an unterminated quoted string`);
        const c = header[i];
        if (c === '\\') {
          if (i + 1 >= header.length) throw bad(`${what} has an unterminated quoted string`);
          v += header[i + 1];
          i += 2;
        } else if (c === '"') {
          i++;
          break;
        } else {
          v += c;
          i++;
        }
      }
      while (header[i] === ' ' || header[i] === '\t') i++;
      if (i < header.length && header[i] !== ';') throw bad(`${what} has text after a quoted parameter`);
    } else {
      const end = header.indexOf(';', i);
      v = (end < 0 ? header.slice(i) : header.slice(i, end)).trim();
      if (!TOKEN.test(v)) throw bad(`${what} has an invalid parameter value`);
      i = end < 0 ? header.length : end;
    }
    if (name in params) throw bad(`${what} repeats the parameter ${name}`);
    params[name] = v;
  }
  return { value, params };
}

/** The boundary of a `multipart/form-data` Content-Type header; throws 400 when there is none. */
export function boundaryOf(contentType: string): string {
  const { value, params } = parseHeaderParams(contentType, 'Content-Type');
  if (value !== 'multipart/form-data') throw bad('Content-Type is not multipart/form-data');
  const b = params.boundary;
  if (b === undefined) throw bad('Content-Type has no boundary');
  if (!BOUNDARY.test(b)) throw bad('the boundary must be 1 to 70 characters of RFC 2046');
  return b;
}

/** RFC 5987 `UTF-8''percent-encoded` (filename*). */
function extValue(v: string): string {
  const m = /^([A-Za-z0-9!#$&+\-^_`{}~]+)'[A-Za-z0-9-]*'(.*)$/.exec(v);
  if (!m || m[1].toLowerCase() !== 'utf-8') throw bad('filename* must be UTF-8 encoded as in RFC 5987');
  try {
    return decodeURIComponent(m[2]);
  } catch {
    throw bad('filename* is not valid percent-encoding');
  }
}

interface PartHeaders {
  name: string;
  filename?: string;
  contentType?: string;
}

function parsePartHeaders(block: Buffer): PartHeaders {
  if (!isUtf8(block)) throw bad('part headers are not valid UTF-8');
  const text = block.toString('utf8');
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of text.split('\r\n')) {
    if (line.length === 0) throw bad('empty line inside part headers');
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line)) throw bad('control character in part headers');
    if (line[0] === ' ' || line[0] === '\t') throw bad('folded part headers are not accepted');
    const colon = line.indexOf(':');
    if (colon <= 0) throw bad('a part header has no name');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!TOKEN.test(name)) throw bad('a part header has an invalid name');
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') {
      if (disposition !== undefined) throw bad('a part has two Content-Disposition headers');
      disposition = value;
    } else if (name === 'content-type') {
      if (contentType !== undefined) throw bad('a part has two Content-Type headers');
      contentType = value;
    } else if (name === 'content-transfer-encoding') {
      // RFC 7578 §4.7: deprecated; only the identity encodings mean anything over HTTP.
      if (!/^(binary|8bit|7bit)$/i.test(value)) throw bad(`Content-Transfer-Encoding ${value.slice(0, 20)} is not supported`);
    }
    // Other headers are ignored (RFC 7578 §4.8).
  }
  if (disposition === undefined) throw bad('a part has no Content-Disposition');
  const d = parseHeaderParams(disposition, 'Content-Disposition');
  if (d.value !== 'form-data') throw bad('a part is not form-data');
  if (d.params.name === undefined || d.params.name === '') throw bad('a part has no name');
  const out: PartHeaders = { name: d.params.name };
  if (d.params['filename*'] !== undefined) out.filename = extValue(d.params['filename*']);
  else if (d.params.filename !== undefined) out.filename = d.params.filename;
  if (contentType !== undefined) {
    const ct = parseHeaderParams(contentType, 'part Content-Type').value;
    out.contentType = MIME.test(ct) ? ct : 'application/octet-stream';
  }
  return out;
}

/**
 * Parses a whole multipart/form-data body. `contentType` is the request's Content-Type header.
 * A part with a `filename` parameter is a file (its bytes are kept as they are); any other part is
 * a text field. Throws a 400 AppError describing the first problem.
 */
export function parseMultipart(body: Buffer, contentType: string, limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS): MultipartForm {
  const boundary = boundaryOf(contentType);
  const dash = Buffer.from('--' + boundary);
  const delimiter = Buffer.from('\r\n--' + boundary);
  const form: MultipartForm = { fields: Object.create(null) as Record<string, string>, files: [] };
  const names = new Set<string>();

  // The first delimiter: at the very start, or after a preamble that ends with CRLF.
  let pos: number;
  if (body.subarray(0, dash.length).equals(dash)) pos = dash.length;
  else {
    const at = body.indexOf(delimiter);
    if (at < 0) throw bad('no boundary delimiter found');
    pos = at + delimiter.length;
  }
  let parts = 0;
  for (;;) {
    // After a delimiter: `--` closes the body; otherwise optional transport padding, then CRLF.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return form; // the epilogue is ignored
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw bad(pos >= body.length ? 'the closing delimiter is missing' : 'a delimiter is not followed by CRLF');
    pos += 2;
    if (++parts > limits.maxParts) throw bad(`more than ${limits.maxParts} parts`);

    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) throw bad('a part has no headers');
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd < 0 || headerEnd - pos > limits.maxHeaderBytes) {
      throw bad(headerEnd < 0 ? 'part headers are not terminated by an empty line' : `part headers over ${limits.maxHeaderBytes} bytes`);
    }
    const headers = parsePartHeaders(body.subarray(pos, headerEnd));
    pos = headerEnd + HEADER_END.length;

    const end = body.indexOf(delimiter, pos);
    if (end < 0) throw bad('the closing delimiter is missing');
    const data = body.subarray(pos, end);
    pos = end + delimiter.length;

    if (names.has(headers.name)) throw bad(`the field ${JSON.stringify(headers.name.slice(0, 64))} is sent twice`);
    names.add(headers.name);
    if (headers.filename !== undefined) {
      if (form.files.length >= limits.maxFiles) throw bad(`more than ${limits.maxFiles} file(s)`);
      form.files.push({
        field: headers.name,
        filename: headers.filename,
        contentType: headers.contentType ?? 'application/octet-stream',
        // A view of the body, not a copy: a file may be as large as the upload cap.
        data,
      });
    } else {
      if (data.length > limits.maxFieldBytes) throw bad(`the field ${JSON.stringify(headers.name.slice(0, 64))} is over ${limits.maxFieldBytes} bytes`);
      if (!isUtf8(data)) throw bad(`the field ${JSON.stringify(headers.name.slice(0, 64))} is not valid UTF-8`);
      form.fields[headers.name] = data.toString('utf8');
    }
  }
}

/** Builds a multipart/form-data body (tests and clients): the Content-Type and the bytes. */
export function buildMultipart(
  parts: Array<{ name: string; value: string | Buffer; filename?: string; contentType?: string }>,
  boundary = '----bp' + Math.random().toString(16).slice(2) + Date.now().toString(16),
): { contentType: string; body: Buffer } {
  const chunks: Buffer[] = [];
  const quote = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(p.name)}"`;
    if (p.filename !== undefined) head += `; filename="${quote(p.filename)}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(head + '\r\n', 'utf8'), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value, 'utf8'), CRLF);
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}
