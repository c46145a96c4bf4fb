// How many bytes a value takes once stored: bounded before the store writes it (MAX_RECORD_BYTES).

/**
 * A value's msgpack size, estimated from above (every length prefix counted at its widest), counted until it passes `limit` (then returned at
 * once, so a huge or cyclic value costs no more than the limit). Iterative: no depth can overflow.
 *
 * A first walk counts every string at 3 bytes per UTF-16 unit (UTF-8's most), which needs no call
 * into the runtime per string; only a value that this looser bound puts over the limit is counted
 * again byte by byte. Every write is checked, so the usual small value costs one cheap walk.
 */
export function documentBytesOver(value: unknown, limit: number): number {
  const loose = walk(value, limit, false);
  return loose > limit ? walk(value, limit, true) : loose;
}

function walk(value: unknown, limit: number, exact: boolean): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += 5 + (exact ? Buffer.byteLength(v) : 3 * v.length);
    else if (v === null || typeof v !== 'object') size += 9;
    else if (ArrayBuffer.isView(v)) size += 5 + v.byteLength;
    else if (v instanceof Date) size += 12;
    else if (Array.isArray(v)) {
      size += 5;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else {
      size += 5;
      for (const k in v) {
        size += 5 + (exact ? Buffer.byteLength(k) : 3 * k.length);
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
    if (size > limit) return size;
  }
  return size;
}
