/**
 * What reading a SOAP request costs the proxy: a typical envelope, and envelopes at the body cap built to
 * be as expensive as possible for the reader and the namespace resolution. `npx tsx bench/soap-parse.ts
 * [--quick] [--cap BYTES]`. Each shape is read twice: with the default structural bounds (what the proxy
 * answers) and with every bound at its largest (what reading the whole envelope costs). Times are CPU time
 * of this process (best of the runs), so other load on the machine inflates them less than wall time;
 * JSON.parse of a document of the same size is printed beside them to scale the figures to another
 * machine. Nothing is asserted: docs/soap.md keeps the figures.
 */
import { readSoapMessage, type SoapReadSettings } from '../core/soap/envelope';
import { SOAP_DEFAULTS, SOAP_INTEGER_SETTINGS, SOAP_LARGEST_BOUNDS } from '../core/soap/settings';
import { billionLaughs, envelope, request } from '../test/unit/core/soap/fixtures';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const capArgument = args.indexOf('--cap');
const cap = capArgument === -1 ? 1024 * 1024 : Number(args[capArgument + 1]);
const runs = quick ? 1 : 3;

const defaultBounds: SoapReadSettings = { ...SOAP_DEFAULTS, soapMaxBodyBytes: cap };
const largestBounds: SoapReadSettings = { ...SOAP_LARGEST_BOUNDS, soapMaxBodyBytes: cap };

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
  [
    'prefixes on the Envelope × declaring blocks',
    (() => {
      const prefixes = Math.min(SOAP_INTEGER_SETTINGS.soapMaxNamespaces.max - 3, Math.floor(room / 56));
      const declarations = Array.from({ length: prefixes }, (_, i) => `xmlns:p${i}="urn:p${i}"`).join(' ');
      const blockRoom = room - declarations.length;
      const blocks = fill('<q:b xmlns:q="urn:q"/>', blockRoom);
      return envelope({ header: `${method}${blocks}`, body: '<Op/>' }).replace(
        'xmlns:t=',
        `${declarations} xmlns:t=`,
      );
    })(),
  ],
  [
    'nested declaring elements below the operation',
    (() => {
      const levels = Math.floor(room / 40);
      return envelope({
        header: method,
        body: `<Op>${'<n xmlns:p="urn:p" a="1">'.repeat(levels)}${'</n>'.repeat(levels)}</Op>`,
      });
    })(),
  ],
  ['one long element name', envelope({ header: method, body: `<Op><${'n'.repeat(room / 2 - 8)}/></Op>` })],
  [
    'long names, each declaring a prefix',
    envelope({ header: method, body: `<Op>${fill(`<p:${'n'.repeat(1000)} xmlns:p="urn:p"/>`, room)}</Op>` }),
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

function outcome(document: string, bounds: SoapReadSettings): string {
  const reading = readSoapMessage(request(document), bounds);
  return reading.ok ? 'read' : `refused: ${reading.cause}`;
}

const typical = envelope();
const typicalRuns = quick ? 500 : 5000;
for (let i = 0; i < 200; i++) readSoapMessage(request(typical), defaultBounds);
const before = process.cpuUsage();
for (let i = 0; i < typicalRuns; i++) readSoapMessage(request(typical), defaultBounds);
const typicalUs = (process.cpuUsage(before).user + process.cpuUsage(before).system) / typicalRuns;

const json = JSON.stringify(
  Array.from({ length: Math.floor(cap / 27) }, (_, i) => ({ a: i, b: 'xxxxxxxx' })),
);
const jsonMs = cpuMs(() => JSON.parse(json));

console.log(`SOAP request reading, body cap ${cap} bytes, CPU time, best of ${runs}`);
console.log(`typical envelope (${Buffer.byteLength(typical)} bytes): ${typicalUs.toFixed(1)} µs per request`);
console.log(`calibration: JSON.parse of ${json.length} bytes: ${jsonMs.toFixed(1)} ms`);
console.log(`${''.padEnd(46)}${'bytes'.padStart(8)}  default bounds${''.padEnd(32)}largest bounds`);
for (const [name, document] of shapes) {
  const size = Buffer.byteLength(document);
  const columns = [defaultBounds, largestBounds].map((bounds) => {
    const ms = cpuMs(() => readSoapMessage(request(document), bounds));
    return `${ms.toFixed(1).padStart(7)} ms ${(ms / jsonMs).toFixed(1).padStart(5)}x  ${outcome(document, bounds).padEnd(30)}`;
  });
  console.log(`${name.padEnd(46)}${String(size).padStart(8)}  ${columns.join('  ')}`);
}
