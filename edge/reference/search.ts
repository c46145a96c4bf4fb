// Reference search. Ranked in tiers, so what a developer most likely means comes first: the exact
// path (with or without its method), then a path containing the phrase (its words joined too, so
// "sign up" finds `/signup`), then words in the path, then the summary, then the description.
import type { Catalogue, Endpoint } from './catalogue.js';

export interface SearchHit {
  method: string;
  path: string;
  summary: string;
  tag: string;
  /** Where the endpoint's full reference is. */
  detail: string;
  /** The endpoint in the browsable reference. */
  anchor: string;
  /** The section's slug (its page is /documentation/tag/<section>.md). */
  section: string;
  score: number;
}

const WEIGHTS = {
  methodAndPath: 20000,
  exactPath: 10000,
  pathContains: 2000,
  lastSegment: 300,
  allTermsInPath: 600,
  pathWord: 60,
  allTermsInSummary: 200,
  summaryWord: 40,
  descriptionWord: 8,
  tag: 10,
};

function words(s: string): string[] {
  return s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

function normalizePath(p: string): string {
  return p.replace(/\{([^}]+)\}/g, ':$1').replace(/\/+$/, '').toLowerCase() || '/';
}

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '');
const hasWord = (set: Set<string>, t: string) => set.has(t) || (t.length >= 3 && [...set].some((w) => w.startsWith(t)));

function score(e: Endpoint, phrase: string, terms: string[]): number {
  const q = phrase.trim().toLowerCase();
  const path = e.path.toLowerCase();
  let s = 0;
  const m = /^(get|post|put|patch|delete)\s+(\S+)$/i.exec(q);
  if (m && m[1].toUpperCase() === e.method && normalizePath(m[2]) === path) s += WEIGHTS.methodAndPath;
  if (q.startsWith('/') && normalizePath(q) === path) s += WEIGHTS.exactPath;
  else if (q.length > 1 && (path.includes(q) || (terms.length > 1 && squash(path).includes(terms.join(''))))) s += WEIGHTS.pathContains;
  // The path is named for it (`/events/checkin` for "checkin"): above paths that merely contain it.
  const last = e.path.split('/').filter((x) => x && !x.startsWith(':')).pop() ?? '';
  if (terms.length && squash(last) === terms.join('')) s += WEIGHTS.lastSegment;
  const pathWords = new Set(words(e.path));
  const summaryWords = new Set(words(e.summary));
  const descWords = new Set(words(e.description));
  const tagWords = new Set(words(e.tag));
  let inPath = 0;
  let inSummary = 0;
  for (const t of terms) {
    if (hasWord(pathWords, t)) {
      s += WEIGHTS.pathWord;
      inPath++;
    }
    if (summaryWords.has(t)) {
      s += WEIGHTS.summaryWord;
      inSummary++;
    } else if (hasWord(summaryWords, t)) {
      s += WEIGHTS.summaryWord / 2;
      inSummary++;
    }
    if (descWords.has(t)) s += WEIGHTS.descriptionWord;
    if (tagWords.has(t)) s += WEIGHTS.tag;
  }
  if (terms.length && inPath === terms.length) s += WEIGHTS.allTermsInPath;
  if (terms.length > 1 && inSummary === terms.length) s += WEIGHTS.allTermsInSummary;
  return s;
}

export function searchCatalogue(c: Catalogue, phrase: string, limit = 50): SearchHit[] {
  // One-letter words say little ("a"), except digits.
  const terms = [...new Set(words(phrase))].filter((t) => t.length > 1 || /[0-9]/.test(t));
  const hits: SearchHit[] = [];
  for (const e of c.endpoints) {
    const s = score(e, phrase, terms);
    if (s <= 0) continue;
    hits.push({
      method: e.method,
      path: e.path,
      summary: e.summary,
      tag: e.tag,
      detail: `/documentation/endpoint?method=${e.method}&path=${encodeURIComponent(e.path)}`,
      anchor: `/documentation#/op/${e.method}${e.path}`,
      section: e.section,
      score: s,
    });
  }
  hits.sort((a, b) => b.score - a.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return hits.slice(0, limit);
}
