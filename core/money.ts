// Money and quantities in integer units (spec: Fields known per kind → sf_order: "Money and quantity
// fields can arrive as numbers or as strings"). Amounts are held as integer minor units of the
// order's currency (cents), quantities as thousandths, tax rates as millionths of a percent; every
// product goes through BigInt and is rounded once, half away from zero. So 0.1 + 0.2 is 30 cents,
// never 0.30000000000000004. Amounts are answered as numbers in major units (minor / 10^exponent,
// which is the double nearest to the exact decimal).
import { appError } from './errors.js';

/** Largest amount in minor units (10^15: exact in a double, far beyond any till). */
export const MAX_MINOR = 1_000_000_000_000_000;
/** Quantities are thousandths: at most 3 decimals, at most one billion units. */
export const QTY_SCALE = 1000;
export const MAX_QUANTITY = 1_000_000_000 * QTY_SCALE;
/** Tax rates are percentages with at most 4 decimals (8.875 %), stored in ten-thousandths. */
export const RATE_SCALE = 10_000;
export const MAX_RATE = 100 * RATE_SCALE;

const POW = [1, 10, 100, 1000, 10_000];

const DECIMAL = /^(\d+)(?:\.(\d*))?$|^\.(\d+)$/;

/**
 * The plain decimal text of a number or numeric string, or a 400 that names `field`. Strings take
 * plain decimal notation (`"12.50"`, `" 3 "`); exponents, signs other than a leading `-`, commas
 * and currency symbols are refused rather than guessed at.
 */
function decimalText(v: unknown, field: string): { negative: boolean; int: string; frac: string } {
  let s: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw appError('ERR_VALIDATION', `${field} must be a finite number`);
    s = String(v);
    // String() is the shortest text that round-trips, so 1.005 reads as "1.005"; tiny and huge
    // values come out in exponent form.
    if (/e/i.test(s)) {
      if (Math.abs(v) >= 1e21) throw appError('ERR_VALIDATION', `${field} is too large`);
      s = v.toFixed(20);
    }
  } else if (typeof v === 'string') {
    s = v.trim();
    if (s.length === 0 || s.length > 40) throw appError('ERR_VALIDATION', `${field} must be a number or a numeric string`);
  } else {
    throw appError('ERR_VALIDATION', `${field} must be a number or a numeric string, not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
  }
  let negative = false;
  if (s.startsWith('-')) {
    negative = true;
    s = s.slice(1);
  } else if (s.startsWith('+')) {
    s = s.slice(1);
  }
  const m = DECIMAL.exec(s);
  if (!m) throw appError('ERR_VALIDATION', `${field} must be a number or a numeric string (plain decimal notation), got ${JSON.stringify(String(v).slice(0, 40))}`);
  return { negative, int: m[1] ?? '0', frac: m[2] ?? m[3] ?? '' };
}

/** Scales a decimal to an integer with `digits` decimals, rounding half away from zero. */
function scaled(d: { int: string; frac: string }, digits: number): bigint {
  const frac = d.frac.padEnd(digits, '0');
  let n = BigInt(d.int + frac.slice(0, digits));
  if (frac.length > digits && frac.charCodeAt(digits) >= 53 /* '5' */) n += 1n;
  return n;
}

export interface MoneyOptions {
  /** Allow 0 (default true). */
  zero?: boolean;
}

/**
 * Money in minor units: a number or numeric string in major units, rounded to the currency's
 * minor unit (half away from zero). Negative or non-numeric → 400 naming `field`.
 */
export function parseMoney(v: unknown, field: string, exponent: number, opts: MoneyOptions = {}): number {
  // Fast path for a number that already is a whole count of minor units (every amount this
  // service writes): below 10^13 doubles are finer than 0.01, so m / 10^e === v only when v is the
  // decimal m / 10^e itself. Anything else takes the exact decimal route below.
  if (typeof v === 'number') {
    const m = Math.round(v * POW[exponent]);
    if (m > 0 && m <= MAX_MINOR && m / POW[exponent] === v) return m;
    if (v === 0 && opts.zero !== false) return 0;
  }
  const d = decimalText(v, field);
  const n = scaled(d, exponent);
  if (d.negative && n !== 0n) throw appError('ERR_VALIDATION', `${field} must not be negative`);
  if (n > BigInt(MAX_MINOR)) throw appError('ERR_VALIDATION', `${field} is too large`);
  if (n === 0n && opts.zero === false) throw appError('ERR_VALIDATION', `${field} must be greater than 0`);
  return Number(n);
}

/** A quantity in thousandths: greater than 0, at most 3 decimals (more is refused, not rounded). */
export function parseQuantity(v: unknown, field: string): number {
  if (typeof v === 'number') {
    const m = Math.round(v * QTY_SCALE);
    if (m > 0 && m <= MAX_QUANTITY && m / QTY_SCALE === v) return m;
  }
  const d = decimalText(v, field);
  if (d.frac.replace(/0+$/, '').length > 3) throw appError('ERR_VALIDATION', `${field} takes at most 3 decimals`);
  const n = scaled(d, 3);
  if (d.negative && n !== 0n) throw appError('ERR_VALIDATION', `${field} must not be negative`);
  if (n === 0n) throw appError('ERR_VALIDATION', `${field} must be greater than 0`);
  if (n > BigInt(MAX_QUANTITY)) throw appError('ERR_VALIDATION', `${field} is too large (at most ${MAX_QUANTITY / QTY_SCALE})`);
  return Number(n);
}

/** A tax rate in percent (0 to 100, at most 4 decimals) in ten-thousandths of a percent. */
export function parseRate(v: unknown, field: string): number {
  if (typeof v === 'number') {
    const m = Math.round(v * RATE_SCALE);
    if (m >= 0 && m <= MAX_RATE && m / RATE_SCALE === v) return m || 0;
  }
  const d = decimalText(v, field);
  if (d.frac.replace(/0+$/, '').length > 4) throw appError('ERR_VALIDATION', `${field} takes at most 4 decimals`);
  const n = scaled(d, 4);
  if (d.negative && n !== 0n) throw appError('ERR_VALIDATION', `${field} must not be negative`);
  if (n > BigInt(MAX_RATE)) throw appError('ERR_VALIDATION', `${field} is a percentage: at most 100`);
  return Number(n);
}

/** Reads a stored value leniently (records written through the record store): unreadable → fallback. */
export function looseMoney(v: unknown, exponent: number, fallback = 0): number {
  if (v === undefined || v === null || v === '') return fallback;
  try {
    return parseMoney(v, 'value', exponent);
  } catch {
    return fallback;
  }
}

/**
 * A stored signed decimal scaled to `digits` decimals (rounded half away from zero), or `fallback`
 * when it is no number or beyond `max`.
 */
function looseSigned(v: unknown, digits: number, max: number, fallback: number): number {
  if (v === undefined || v === null || v === '') return fallback;
  try {
    const d = decimalText(v, 'value');
    const n = scaled(d, digits);
    if (n > BigInt(max)) return fallback;
    return d.negative && n !== 0n ? -Number(n) : Number(n);
  } catch {
    return fallback;
  }
}

/**
 * A stored line price (unit price, modifier) as it was written: a negative one (a discount line) is
 * kept, not read as 0, so the total is the one the record means.
 */
export function looseLinePrice(v: unknown, exponent: number): number {
  return looseSigned(v, exponent, MAX_MINOR, 0);
}

/**
 * A stored quantity as it was written: 0 stays 0 (the line adds nothing), a negative one (a return)
 * stays negative, more than 3 decimals are rounded; absent or unreadable is 1.
 */
export function looseQuantity(v: unknown, fallback = QTY_SCALE): number {
  return looseSigned(v, 3, MAX_QUANTITY, fallback);
}

export function looseRate(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  try {
    return parseRate(v, 'taxRate');
  } catch {
    return undefined;
  }
}

const MAX_BIG = BigInt(MAX_MINOR);

/** round(a * b / d), half away from zero, for integers a, b of any sign and positive d; refused beyond ±MAX_MINOR. */
function mulDiv(a: number, b: number, d: number, what: string): number {
  const out = mulDivAbs(Math.abs(a), Math.abs(b), d, what);
  return out !== 0 && a < 0 !== b < 0 ? -out : out;
}

/** mulDiv for non-negative a and b. */
function mulDivAbs(a: number, b: number, d: number, what: string): number {
  const p = a * b;
  let out: number;
  if (p <= 2 ** 51) {
    // Exact in a double: the product, 2p + d, and (n - n % m) / m for integers below 2^53.
    const n = p * 2 + d;
    out = (n - (n % (2 * d))) / (2 * d);
  } else {
    const bd = BigInt(d);
    const big = (BigInt(a) * BigInt(b) * 2n + bd) / (bd * 2n);
    if (big > MAX_BIG) throw appError('ERR_VALIDATION', `${what} is too large`);
    out = Number(big);
  }
  if (out > MAX_MINOR) throw appError('ERR_VALIDATION', `${what} is too large`);
  return out;
}

/** Quantity (thousandths) × unit price (minor) in minor units. */
export function lineAmount(quantity: number, unitPrice: number): number {
  return mulDiv(quantity, unitPrice, QTY_SCALE, 'line amount');
}

/** Tax on an amount at a rate (ten-thousandths of a percent), in minor units. */
export function taxOn(amount: number, rate: number): number {
  return mulDiv(amount, rate, 100 * RATE_SCALE, 'tax');
}

/**
 * Sum of minor-unit amounts, refused when it leaves ±MAX_MINOR. Checked at every step, so every
 * partial sum stays far below 2^53 and the addition is exact.
 */
export function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) {
    total += v;
    if (total > MAX_MINOR || total < -MAX_MINOR) throw appError('ERR_VALIDATION', 'total is too large');
  }
  return total;
}

/** Splits `amount` into `parts` integer shares that add up to it; the remainder goes to the first. */
export function divide(amount: number, parts: number): number[] {
  // Toward zero, so a negative amount (a discount) splits as evenly as a positive one.
  const base = Math.trunc(amount / parts);
  const out = new Array<number>(parts).fill(base);
  out[0] += amount - base * parts;
  return out;
}

/** Minor units → a number in major units (the double nearest to the exact decimal). */
export function toMajor(minor: number, exponent: number): number {
  return exponent === 0 ? minor : minor / 10 ** exponent;
}

/** Minor units → fixed text (`1234` → `"12.34"`), for printed receipts. */
export function formatMinor(minor: number, exponent: number): string {
  const neg = minor < 0;
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return neg ? `-${text}` : text;
}

export function quantityOf(thousandths: number): number {
  return thousandths / QTY_SCALE;
}

export function rateOf(scaledRate: number): number {
  return scaledRate / RATE_SCALE;
}

const exponents = new Map<string, number>();
const KNOWN: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Decimals of a currency's minor unit (USD 2, JPY 0, KWD 3); an unknown code is a 400. */
export function currencyExponent(currency: string): number {
  let e = exponents.get(currency);
  if (e !== undefined) return e;
  if (!/^[A-Z]{3}$/.test(currency) || !KNOWN.has(currency)) throw appError('ERR_VALIDATION', `currency "${currency}" is not an ISO 4217 code`);
  try {
    e = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    throw appError('ERR_VALIDATION', `currency "${currency}" is not an ISO 4217 code`);
  }
  exponents.set(currency, e);
  return e;
}

/** A currency code from a record or config, upper-cased; anything unusable → the fallback. */
export function currencyOf(v: unknown, fallback: string): string {
  if (typeof v !== 'string') return fallback;
  const c = v.trim().toUpperCase();
  try {
    currencyExponent(c);
    return c;
  } catch {
    return fallback;
  }
}
