// AI replies for chat behind one small provider interface (DESIGN: External providers).
//
// - `local` (the default) works offline: it answers from the tenant's FAQ records (datatype `faq`,
//   data {question, answer, keywords?, active?}) by best keyword match, or with a polite hand-over
//   message when nothing matches, and streams the answer word by word. It says so in the log.
// - `openai` streams real model output from any OpenAI-compatible chat-completions endpoint
//   (`POST {baseUrl}/chat/completions` with `stream: true`), base URL and key from config.
import type { Config } from './config.js';
import { AppError } from './errors.js';
import type { Logger } from './log.js';
import type { Store } from './store/store.js';

export const FAQ_DATATYPE = 'faq';

export interface AiMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface AiRequest {
  tenant: string;
  /** The conversation so far, oldest first; the last `user` message is the question. */
  messages: AiMessage[];
  /** `reply` answers the customer; `assist` drafts a reply for an agent. */
  purpose: 'reply' | 'assist';
  signal?: AbortSignal;
}

export interface AiAnswer {
  /** The answer, chunk by chunk (words for `local`, model deltas for `openai`). */
  chunks: AsyncIterable<string>;
  /** True when the provider could not answer and the customer should get a human. */
  handover: boolean;
  /** The FAQ record the answer came from (local provider). */
  faqId?: string;
}

export interface AiProvider {
  readonly name: string;
  answer(req: AiRequest): Promise<AiAnswer>;
}

export type AiConfig = Config['providers']['ai'];

export const HANDOVER_REPLY =
  "Thanks for your message! I don't have a good answer to that, so I'm handing you over to a member of our team. Someone will be with you shortly.";
export const ASSIST_FALLBACK =
  'No FAQ answers this one. Suggested reply: "Thanks for reaching out! Let me look into this for you and get right back to you."';

const STOPWORDS = new Set(
  ('a an and are as at be but by can do does for from have how i if in is it me my of on or our so ' +
    'that the this to was we what when where which who why will with you your please hi hello thanks').split(' '),
);

/** Lower-cased words without stopwords, a trailing plural `s` dropped ("refunds" ~ "refund"). */
export function keywords(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    out.push(w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
  }
  return out;
}

export interface Faq {
  id: string;
  question: string;
  answer: string;
  keywords: string[];
}

/**
 * Where a provider reads a tenant's FAQs. An answer is made on the node of the chat's socket, so in
 * cluster mode this reads them on the tenant's owner (edge/app.ts wires it); faqsIn reads a store.
 */
export type FaqSource = (tenant: string) => Faq[] | Promise<Faq[]>;

export const faqsFrom =
  (store: Store): FaqSource =>
  (tenant) =>
    faqsIn(store, tenant);

/** The tenant's active FAQs in `store`. */
export function faqsIn(store: Store, tenant: string): Faq[] {
  const out: Faq[] = [];
  for (const r of store.scan(tenant, FAQ_DATATYPE)) {
    const d = r.data as Record<string, unknown>;
    if (d.active === false || typeof d.answer !== 'string' || !d.answer.trim()) continue;
    const kw = Array.isArray(d.keywords) ? d.keywords.filter((k): k is string => typeof k === 'string') : [];
    out.push({ id: r.sk, question: typeof d.question === 'string' ? d.question : '', answer: d.answer, keywords: kw });
  }
  return out;
}

/**
 * The best FAQ for a question: a declared keyword (or phrase) found in the question counts 3,
 * each word shared with the FAQ's question counts 1. Below 2 points nothing matches.
 */
export function bestFaq(faqs: Faq[], question: string): { faq: Faq; score: number } | undefined {
  const words = new Set(keywords(question));
  const text = ` ${keywords(question).join(' ')} `;
  let best: { faq: Faq; score: number } | undefined;
  for (const faq of faqs) {
    let score = 0;
    for (const k of faq.keywords) {
      const phrase = keywords(k).join(' ');
      if (phrase && text.includes(` ${phrase} `)) score += 3;
    }
    for (const w of new Set(keywords(faq.question))) if (words.has(w)) score += 1;
    if (score >= 2 && (!best || score > best.score)) best = { faq, score };
  }
  return best;
}

/** Splits text into words that keep their trailing whitespace, so the chunks join back exactly. */
export function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function* wordByWord(text: string, delayMs: number, signal?: AbortSignal): AsyncIterable<string> {
  const parts = words(text);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, signal);
    if (signal?.aborted) return;
    yield parts[i];
  }
}

function lastQuestion(messages: AiMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messages[i].content;
  return '';
}

export class LocalAiProvider implements AiProvider {
  readonly name = 'local';

  constructor(
    private readonly faqs: FaqSource,
    private readonly wordDelayMs: number,
  ) {}

  async answer(req: AiRequest): Promise<AiAnswer> {
    const hit = bestFaq(await this.faqs(req.tenant), lastQuestion(req.messages));
    if (!hit) {
      const text = req.purpose === 'assist' ? ASSIST_FALLBACK : HANDOVER_REPLY;
      return { chunks: wordByWord(text, this.wordDelayMs, req.signal), handover: req.purpose === 'reply' };
    }
    return { chunks: wordByWord(hit.faq.answer, this.wordDelayMs, req.signal), handover: false, faqId: hit.faq.id };
  }
}

/** Reads an OpenAI-style event stream: `data: {json}` lines, `data: [DONE]` at the end. */
async function* completionDeltas(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = body.getReader();
  try {
    for (;;) {
      if (signal?.aborted) return;
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        let parsed: { choices?: Array<{ delta?: { content?: unknown } }> };
        try {
          parsed = JSON.parse(data);
        } catch {
          continue;
        }
        const text = parsed.choices?.[0]?.delta?.content;
        if (typeof text === 'string' && text.length > 0) yield text;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

export class OpenAiCompatibleProvider implements AiProvider {
  readonly name = 'openai';

  constructor(
    private readonly cfg: AiConfig,
    private readonly faqs: FaqSource,
  ) {
    if (!cfg.baseUrl) throw new Error('providers.ai.baseUrl is required for the openai provider');
  }

  async answer(req: AiRequest): Promise<AiAnswer> {
    // The tenant's best FAQ travels as context, so the model answers with the tenant's facts.
    const hit = bestFaq(await this.faqs(req.tenant), lastQuestion(req.messages));
    const system: AiMessage = {
      role: 'system',
      content:
        (req.purpose === 'assist'
          ? 'Draft a short, friendly reply that a support agent can send to the customer.'
          : 'You are a helpful customer support assistant. Answer briefly and politely.') +
        (hit ? `\nRelevant FAQ. Q: ${hit.faq.question}\nA: ${hit.faq.answer}` : ''),
    };
    const timeout = AbortSignal.timeout(this.cfg.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await fetch(`${this.cfg.baseUrl!.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.cfg.model, stream: true, messages: [system, ...req.messages] }),
        signal,
      });
    } catch (cause) {
      throw new AppError('ERR_UNAVAILABLE', ['the AI provider could not be reached'], { cause });
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw new AppError('ERR_UNAVAILABLE', [`the AI provider answered ${res.status}`]);
    }
    return { chunks: completionDeltas(res.body, signal), handover: false, faqId: hit?.faq.id };
  }
}

export function createAiProvider(cfg: AiConfig, faqs: FaqSource, logger?: Logger): AiProvider {
  if (cfg.provider === 'openai') {
    logger?.info({ baseUrl: cfg.baseUrl, model: cfg.model }, 'AI provider: OpenAI-compatible endpoint');
    return new OpenAiCompatibleProvider(cfg, faqs);
  }
  logger?.info('AI provider: local (answers from the tenant\'s faq records; no model is called)');
  return new LocalAiProvider(faqs, cfg.wordDelayMs);
}
