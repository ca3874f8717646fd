import { describe, expect, it } from 'vitest';
import { diffCommandStats, parseCommandStats, serverCpuSeconds } from '../../../bench/commandstats';

const before = [
  '# Commandstats',
  'cmdstat_info:calls=3,usec=300,usec_per_call=100.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=10,usec=90,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
  'cmdstat_config|get:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

const after = [
  '# Commandstats',
  'cmdstat_info:calls=4,usec=400,usec_per_call=100.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=110,usec=990,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
  'cmdstat_hget:calls=300,usec=100,usec_per_call=0.33,rejected_calls=0,failed_calls=0',
  'cmdstat_config|get:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

describe('parseCommandStats', () => {
  it('reads the calls of every command, subcommands included, from CRLF lines', () => {
    const calls = parseCommandStats(before);
    expect([...calls]).toEqual([
      ['info', 3],
      ['evalsha', 10],
      ['config|get', 1],
    ]);
  });

  it('reads an empty section as no commands', () => {
    expect(parseCommandStats('# Commandstats\r\n').size).toBe(0);
  });

  it('refuses a line without a calls count rather than reading it as zero', () => {
    expect(() => parseCommandStats('cmdstat_get:usec=3')).toThrow(/calls=/);
    expect(() => parseCommandStats('cmdstat_get:calls=x,usec=3')).toThrow(/calls=/);
  });
});

describe('diffCommandStats', () => {
  it('sums the commands run between snapshots, without the INFO that took them', () => {
    const diff = diffCommandStats(parseCommandStats(before), parseCommandStats(after));
    expect(diff.total).toBe(400);
    expect(diff.byCommand).toEqual([
      ['hget', 300],
      ['evalsha', 100],
    ]);
  });

  it('excludes the commands it is told to', () => {
    const diff = diffCommandStats(parseCommandStats(before), parseCommandStats(after), ['info', 'hget']);
    expect(diff.total).toBe(100);
  });

  it('refuses snapshots whose counters went down (a CONFIG RESETSTAT in between)', () => {
    expect(() => diffCommandStats(parseCommandStats(after), parseCommandStats(before))).toThrow(/went down/);
  });
});

describe('serverCpuSeconds', () => {
  it('adds the user and system CPU time of the server, not of its children', () => {
    const info = [
      '# CPU',
      'used_cpu_sys:1.250000',
      'used_cpu_user:2.500000',
      'used_cpu_sys_children:9.000000',
      'used_cpu_user_children:9.000000',
      '',
    ].join('\r\n');
    expect(serverCpuSeconds(info)).toBe(3.75);
  });

  it('refuses an answer without the CPU fields', () => {
    expect(() => serverCpuSeconds('# CPU\r\nused_cpu_sys:1.0\r\n')).toThrow(/used_cpu_user/);
  });
});
