/**
 * Operations on a local Redis Cluster the tests need and the product never does: who owns a slot,
 * moving a slot between primaries (as `redis-cli --cluster reshard` does: IMPORTING, MIGRATING,
 * MIGRATE of its keys, then the new owner announced to every primary), and waiting for a failover.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import type { RedisNode } from '../../core/settings/config';

const ADMIN_TIMEOUT_MS = 5000;
const MIGRATE_BATCH = 100;
/** Tries at ending a move while clients keep writing keys of the slot on its source. */
const MOVE_ATTEMPTS = 5;

export interface ClusterMember extends RedisNode {
  readonly id: string;
  readonly role: 'master' | 'slave';
  /** Slot ranges a primary serves, `[first, last]`. */
  readonly slots: readonly (readonly [number, number])[];
  readonly failed: boolean;
}

/** Admin connections to the nodes, one per node, opened on first use. */
export class ClusterAdmin {
  private readonly connections = new Map<string, Redis>();

  constructor(private readonly seeds: readonly RedisNode[]) {}

  node(node: RedisNode): Redis {
    const key = `${node.host}:${node.port}`;
    let connection = this.connections.get(key);
    // A connection to a node that was killed has ended for good: a node started again needs a new one.
    if (!connection || connection.status === 'end') {
      connection = new Redis({
        host: node.host,
        port: node.port,
        lazyConnect: true,
        commandTimeout: ADMIN_TIMEOUT_MS,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      connection.on('error', () => undefined);
      this.connections.set(key, connection);
    }
    return connection;
  }

  /** CLUSTER NODES as seen by the first seed that answers. */
  async members(): Promise<ClusterMember[]> {
    let failure: unknown;
    for (const seed of this.seeds) {
      try {
        const text = String(await this.node(seed).call('CLUSTER', 'NODES'));
        return text.trim().split('\n').map(parseMember);
      } catch (error) {
        failure = error;
        this.forget(seed);
      }
    }
    throw failure;
  }

  async primaries(): Promise<ClusterMember[]> {
    return (await this.members()).filter((member) => member.role === 'master' && !member.failed);
  }

  async slotOf(key: string): Promise<number> {
    for (const seed of this.seeds) {
      try {
        return Number(await this.node(seed).call('CLUSTER', 'KEYSLOT', key));
      } catch {
        this.forget(seed);
      }
    }
    throw new Error('no node answers CLUSTER KEYSLOT');
  }

  async ownerOf(slot: number): Promise<ClusterMember> {
    const owner = (await this.primaries()).find((member) =>
      member.slots.some(([first, last]) => slot >= first && slot <= last),
    );
    if (!owner) throw new Error(`no primary serves slot ${slot}`);
    return owner;
  }

  /**
   * Moves `slot` and its keys to `target`, while clients keep using it, as `redis-cli --cluster
   * reshard` does. The source holds the slot open (MIGRATING: clients get ASK, or TRYAGAIN for a
   * script whose keys are split) for two round trips: its commands go out pipelined, so the window
   * does not stretch with this process's other work. `whileMigrated` holds it open longer: it runs
   * once the keys are on the target, before the move ends.
   */
  async moveSlot(slot: number, target: ClusterMember, whileMigrated?: () => Promise<void>): Promise<void> {
    const source = await this.ownerOf(slot);
    if (source.id === target.id) return;
    const from = this.node(source);
    const to = this.node(target);
    await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
    const opened = await from
      .pipeline()
      .call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id)
      .call('CLUSTER', 'GETKEYSINSLOT', slot, MIGRATE_BATCH)
      .exec();
    let keys = ((opened ?? [])[1]?.[1] ?? []) as string[];
    while (keys.length === MIGRATE_BATCH) {
      await this.migrate(from, target, keys);
      keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, MIGRATE_BATCH)) as string[];
    }
    if (whileMigrated) {
      await this.migrate(from, target, keys);
      await whileMigrated();
      keys = [];
    }
    // The last keys and the end of the move in one round trip. A key the source still holds then fails
    // its SETSLOT (one listed too early, or expired but not yet reclaimed: MIGRATE reclaims it); as
    // redis-cli does, move what is left and end the move again. The new owner hears of it only then:
    // told first, it would claim the slot while the source still holds keys, which Redis then drops.
    for (let attempt = 1; ; attempt++) {
      const moved = from.pipeline();
      if (keys.length > 0)
        moved.call('MIGRATE', target.host, target.port, '', 0, ADMIN_TIMEOUT_MS, 'KEYS', ...keys);
      moved.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      const failed = ((await moved.exec()) ?? []).find(([error]) => error)?.[0];
      if (!failed) break;
      if (!String(failed).includes('still hold keys') || attempt === MOVE_ATTEMPTS) throw failed;
      keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, MIGRATE_BATCH)) as string[];
    }
    await to.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
    for (const other of await this.primaries()) {
      if (other.id !== source.id && other.id !== target.id) {
        await this.node(other).call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      }
    }
  }

  private async migrate(from: Redis, target: ClusterMember, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await from.call('MIGRATE', target.host, target.port, '', 0, ADMIN_TIMEOUT_MS, 'KEYS', ...keys);
  }

  /** Waits until a live primary other than `dead` serves `slot` and the cluster says ok. */
  async waitForFailover(slot: number, dead: RedisNode, timeoutMs: number): Promise<ClusterMember> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const owner = await this.ownerOf(slot);
        const live = this.seeds.filter((seed) => seed.port !== dead.port);
        const states = await Promise.all(
          live.map((seed) => this.node(seed).call('CLUSTER', 'INFO').then(String)),
        );
        if (owner.port !== dead.port && states.every((info) => info.includes('cluster_state:ok'))) {
          return owner;
        }
      } catch {
        // a node still starting or gone: ask again
      }
      if (Date.now() > deadline) throw new Error(`slot ${slot} not failed over within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  close(): void {
    for (const connection of this.connections.values()) connection.disconnect();
    this.connections.clear();
  }

  private forget(node: RedisNode): void {
    const key = `${node.host}:${node.port}`;
    this.connections.get(key)?.disconnect();
    this.connections.delete(key);
  }
}

/** One line of CLUSTER NODES: `<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>...` */
function parseMember(line: string): ClusterMember {
  const [id = '', address = '', flags = '', , , , , , ...slots] = line.split(' ');
  const [hostPort = ''] = address.split('@');
  const separator = hostPort.lastIndexOf(':');
  return {
    id,
    host: hostPort.slice(0, separator),
    port: Number(hostPort.slice(separator + 1)),
    role: flags.includes('master') ? 'master' : 'slave',
    // `fail` (agreed) or `fail?` (suspected by this node).
    failed: flags.includes('fail'),
    slots: slots
      .filter((slot) => !slot.startsWith('['))
      .map((slot) => {
        const [first, last = first] = slot.split('-');
        return [Number(first), Number(last)] as const;
      }),
  };
}
