/**
 * What reading a SOAP request costs the proxy: a typical envelope, and envelopes at the body cap built to
 * be as expensive as possible for fast-xml-parser and the namespace resolution. `npx tsx bench/soap-parse.ts
 * [--quick] [--cap BYTES]`. Times are CPU time of this process (best of the runs), so other load on the
 * machine inflates them less than wall time; JSON.parse of a document of the same size is printed
 * beside them to scale the figures to another machine. Nothing is asserted: docs/soap.md keeps the figures.
 */
import { readSoapMessage } from '../lambdas/core/soap/envelope';
import { billionLaughs, envelope, request } from '../test/unit/soap/fixtures';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const capArgument = args.indexOf('--cap');
const cap = capArgument === -1 ? 1024 * 1024 : Number(args[capArgument + 1]);
const runs = quick ? 1 : 3;

/** `unit` repeated to fill `room` bytes. */
const fill = (unit: string, room: number) => unit.repeat(Math.max(0, Math.floor(room / unit.length)));

const method = '<t:ApiKey>k</t:ApiKey><t:method>Op</t:method>';
/** Room left for the payload in an envelope at the cap. */
const room = cap - Buffer.byteLength(envelope({ header: method, body: '<Op/>' })) - 64;

const shapes: readonly [string, string][] = [
  ['long text in the operation', envelope({ header: method, body: `<Op>${'x'.repeat(room)}</Op>` })],
  [
    'empty elements under the operation',
    envelope({ header: method, body: `<Op>${fill('<b/>', room)}</Op>` }),
  ],
  [
    'empty elements one level deeper',
    envelope({ header: method, body: `<Op><a>${fill('<b/>', room)}</a></Op>` }),
  ],
  ['empty header blocks', envelope({ header: `${method}${fill('<b/>', room)}`, body: '<Op/>' })],
  [
    'attributes on the operation',
    envelope({
      header: method,
      body: `<Op ${Array.from({ length: Math.floor(room / 12) }, (_, i) => `a${i.toString(36)}="1"`).join(' ')}/>`,
    }),
  ],
  [
    'namespace declarations on the operation',
    envelope({
      header: method,
      body: `<Op ${Array.from({ length: Math.floor(room / 20) }, (_, i) => `xmlns:p${i.toString(36)}="u"`).join(' ')}/>`,
    }),
  ],
  [
    'nested elements below the operation',
    envelope({
      header: method,
      body: `<Op><a>${'<n>'.repeat(Math.floor(room / 7))}${'</n>'.repeat(Math.floor(room / 7))}</a></Op>`,
    }),
  ],
  [
    'entity references in the key',
    envelope({ header: `<t:ApiKey>${fill('&amp;', room)}</t:ApiKey><t:method>Op</t:method>`, body: '<Op/>' }),
  ],
  ['billion laughs (refused before parsing)', billionLaughs()],
];

function cpuMs(work: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage();
    work();
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

function outcome(document: string): string {
  const reading = readSoapMessage(request(document), cap);
  return reading.ok ? 'read' : `refused: ${reading.cause}`;
}

const typical = envelope();
const typicalRuns = quick ? 500 : 5000;
for (let i = 0; i < 200; i++) readSoapMessage(request(typical), cap);
const before = process.cpuUsage();
for (let i = 0; i < typicalRuns; i++) readSoapMessage(request(typical), cap);
const typicalUs = (process.cpuUsage(before).user + process.cpuUsage(before).system) / typicalRuns;

const json = JSON.stringify(
  Array.from({ length: Math.floor(cap / 27) }, (_, i) => ({ a: i, b: 'xxxxxxxx' })),
);
const jsonMs = cpuMs(() => JSON.parse(json));

console.log(`SOAP request reading, body cap ${cap} bytes, CPU time, best of ${runs}`);
console.log(`typical envelope (${Buffer.byteLength(typical)} bytes): ${typicalUs.toFixed(1)} µs per request`);
console.log(`calibration: JSON.parse of ${json.length} bytes: ${jsonMs.toFixed(1)} ms`);
for (const [name, document] of shapes) {
  const ms = cpuMs(() => readSoapMessage(request(document), cap));
  const size = Buffer.byteLength(document);
  console.log(
    `${name.padEnd(42)} ${String(size).padStart(8)} bytes ${ms.toFixed(1).padStart(8)} ms  ` +
      `${(ms / jsonMs).toFixed(1).padStart(5)}x JSON.parse  ${outcome(document)}`,
  );
}
