// Reference search. Scored so that what a developer most likely means comes first: an exact path
// match above a path that contains the phrase, above words in the summary, above the section name.
import type { Catalogue, Endpoint } from './catalogue.js';

export interface SearchHit {
  method: string;
  path: string;
  summary: string;
  tag: string;
  /** Where the endpoint's full reference is. */
  detail: string;
  /** The section's slug (its page is /documentation/tag/<section>.md). */
  section: string;
  score: number;
}

const WEIGHTS = { exactPath: 1000, methodAndPath: 1200, pathContains: 200, pathWord: 60, summaryWord: 20, descriptionWord: 8, tag: 10 };

function words(s: string): string[] {
  return s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

function normalizePath(p: string): string {
  return p.replace(/\{([^}]+)\}/g, ':$1').replace(/\/+$/, '').toLowerCase() || '/';
}

function score(e: Endpoint, phrase: string, terms: string[]): number {
  const q = phrase.trim().toLowerCase();
  const path = e.path.toLowerCase();
  let s = 0;
  const m = /^(get|post|put|patch|delete)\s+(\S+)$/i.exec(q);
  if (m && m[1].toUpperCase() === e.method && normalizePath(m[2]) === path) s += WEIGHTS.methodAndPath;
  if (q.startsWith('/') && normalizePath(q) === path) s += WEIGHTS.exactPath;
  else if (q.length > 1 && path.includes(q)) s += WEIGHTS.pathContains;
  const pathWords = new Set(words(e.path));
  const summaryWords = new Set(words(e.summary));
  const descWords = new Set(words(e.description));
  const tagWords = new Set(words(e.tag));
  for (const t of terms) {
    if (pathWords.has(t)) s += WEIGHTS.pathWord;
    if (summaryWords.has(t)) s += WEIGHTS.summaryWord;
    else if ([...summaryWords].some((w) => w.startsWith(t) && t.length >= 3)) s += WEIGHTS.summaryWord / 2;
    if (descWords.has(t)) s += WEIGHTS.descriptionWord;
    if (tagWords.has(t)) s += WEIGHTS.tag;
  }
  return s;
}

export function searchCatalogue(c: Catalogue, phrase: string, limit = 50): SearchHit[] {
  const terms = [...new Set(words(phrase))];
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
      section: e.section,
      score: s,
    });
  }
  hits.sort((a, b) => b.score - a.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return hits.slice(0, limit);
}
