// `npm start`: builds dist/ when it is missing or older than any source file, then serves.
import { join } from 'node:path';
import { ensureBuilt, root } from './ensure-built.mjs';

const entry = join(root, 'dist', 'edge', 'main.js');
ensureBuilt(entry);
await import(entry);
