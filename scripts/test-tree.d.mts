// Types of test-tree.mjs, for the TypeScript test helpers that use it (test/helpers/transpiled.ts).
export declare const root: string;
/** Builds (or finds) the transpiled tree of the current sources; returns its directory. */
export declare function buildTree(): string;
