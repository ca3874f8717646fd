/**
 * The local stack's outbox: the portal's e-mails, kept in memory and shown on 127.0.0.1 (local only, never
 * deployed). `GET /` lists them for a person, newest first; `GET /messages.json` gives them to a test.
 * It stands where Amazon SES is in AWS.
 */
import { createServer } from 'node:http';
import { escapeHtml } from '../core/portal/http';
import type { MailMessage, MailPort } from '../core/portal/mail';
import { closeServer, listenOnLoopback } from './http-server';

export interface SunkMail extends MailMessage {
  readonly from: string;
  /** Epoch ms. */
  readonly sentAt: number;
}

/** The sink keeps the latest messages only. */
const KEPT = 500;

export interface MailSink extends MailPort {
  readonly url: string;
  messages(): readonly SunkMail[];
  stop(): Promise<void>;
}

function page(messages: readonly SunkMail[]): string {
  const items = [...messages]
    .reverse()
    .map(
      (m) =>
        `<article><h2>${escapeHtml(m.subject)}</h2><p>To ${escapeHtml(m.to)} · ${new Date(m.sentAt).toISOString()}</p><pre>${escapeHtml(m.text)}</pre></article>`,
    )
    .join('');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Local mail sink</title></head><body><h1>Local mail sink</h1>${items || '<p>No e-mail yet.</p>'}</body></html>`;
}

export async function startMailSink(from: string): Promise<MailSink> {
  const messages: SunkMail[] = [];
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
    if (request.method === 'GET' && path === '/messages.json') {
      response
        .writeHead(200, { ...headers, 'content-type': 'application/json' })
        .end(JSON.stringify(messages));
    } else if (request.method === 'GET' && path === '/') {
      response
        .writeHead(200, {
          ...headers,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': "default-src 'none'",
        })
        .end(page(messages));
    } else {
      response
        .writeHead(404, { ...headers, 'content-type': 'application/json' })
        .end('{"message":"Not Found"}');
    }
  });
  const port = await listenOnLoopback(server, 0);
  return {
    url: `http://127.0.0.1:${port}`,
    async send(message) {
      messages.push({ ...message, from, sentAt: Date.now() });
      if (messages.length > KEPT) messages.shift();
    },
    messages: () => [...messages],
    stop: () => closeServer(server),
  };
}
