// How many bytes a value takes once stored: bounded before the store writes it (MAX_RECORD_BYTES).

/**
 * A value's msgpack size, estimated from above (every length prefix counted at its widest), counted until it passes `limit` (then returned at
 * once, so a huge or cyclic value costs no more than the limit). Iterative: no depth can overflow.
 */
export function documentBytesOver(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += 5 + Buffer.byteLength(v);
    else if (v === null || typeof v !== 'object') size += 9;
    else if (ArrayBuffer.isView(v)) size += 5 + v.byteLength;
    else if (v instanceof Date) size += 12;
    else if (Array.isArray(v)) {
      size += 5;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else {
      size += 5;
      for (const k in v) {
        size += 5 + Buffer.byteLength(k);
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
    if (size > limit) return size;
  }
  return size;
}
