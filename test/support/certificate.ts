import { generate } from 'selfsigned';

/**
 * A self-signed certificate (its own CA) for `name` only, never an address: as ElastiCache's and
 * MemoryDB's name their endpoints, while the cluster's nodes announce addresses.
 */
export async function certificateFor(name: string): Promise<{ certificate: string; privateKey: string }> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }],
  });
  return { certificate: pems.cert, privateKey: pems.private };
}
