import { describe, expect, it } from 'vitest';
import {
  diffCommandStats,
  parseCommandStats,
  SCRIPT_COMMANDS,
  serverCpuSeconds,
} from '../../../bench/commandstats';

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
  it('reads the calls and time of every command, subcommands included, from CRLF lines', () => {
    const stats = parseCommandStats(before);
    expect([...stats]).toEqual([
      ['info', { calls: 3, usec: 300 }],
      ['evalsha', { calls: 10, usec: 90 }],
      ['config|get', { calls: 1, usec: 5 }],
    ]);
  });

  it('reads usec= itself, not usec_per_call=, wherever it stands in the line', () => {
    expect(parseCommandStats('cmdstat_get:usec_per_call=2.50,calls=4,usec=10')).toEqual(
      new Map([['get', { calls: 4, usec: 10 }]]),
    );
  });

  it('reads an empty section as no commands', () => {
    expect(parseCommandStats('# Commandstats\r\n').size).toBe(0);
  });

  it('refuses a line without a calls count rather than reading it as zero', () => {
    expect(() => parseCommandStats('cmdstat_get:usec=3')).toThrow(/calls=/);
    expect(() => parseCommandStats('cmdstat_get:calls=x,usec=3')).toThrow(/calls=/);
    expect(() => parseCommandStats('cmdstat_get:calls=,usec=3')).toThrow(/calls=/);
  });

  it('refuses a line without a valid usec count, naming the line', () => {
    expect(() => parseCommandStats('cmdstat_get:calls=3,usec_per_call=1.00')).toThrow(
      'INFO commandstats: no valid usec= count in line "cmdstat_get:calls=3,usec_per_call=1.00"',
    );
    for (const usec of ['', '-4', '1.5', '1e3', '12x', '1234567890123456']) {
      expect(() => parseCommandStats(`cmdstat_get:calls=3,usec=${usec}`)).toThrow(/usec=/);
    }
    expect(parseCommandStats('cmdstat_get:calls=3,usec=123456789012345').get('get')?.usec).toBe(
      123_456_789_012_345,
    );
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

  it('reads the script time as the scripts’ usec only: their commands’ own usec is inside it already', () => {
    // A script's HGETs are timed on their own line and again inside the EVALSHA's usec.
    const diff = diffCommandStats(parseCommandStats(before), parseCommandStats(after));
    expect(diff.scriptMicros).toBe(900);
    const stats = (evalshaUsec: number, evalUsec: number, getUsec: number) =>
      parseCommandStats(
        [
          `cmdstat_evalsha:calls=5,usec=${evalshaUsec},usec_per_call=1.00`,
          `cmdstat_eval:calls=1,usec=${evalUsec},usec_per_call=1.00`,
          `cmdstat_get:calls=9,usec=${getUsec},usec_per_call=1.00`,
          'cmdstat_info:calls=2,usec=800,usec_per_call=400.00',
        ].join('\r\n'),
      );
    // EVAL (after a NOSCRIPT) is a script too; GET and INFO are not.
    expect(diffCommandStats(stats(100, 10, 50), stats(160, 25, 90)).scriptMicros).toBe(75);
    expect(SCRIPT_COMMANDS).toEqual(expect.arrayContaining(['evalsha', 'eval']));
    expect(SCRIPT_COMMANDS).not.toContain('get');
  });

  it('excludes the commands it is told to', () => {
    const diff = diffCommandStats(parseCommandStats(before), parseCommandStats(after), ['info', 'hget']);
    expect(diff.total).toBe(100);
  });

  it('refuses snapshots whose counters went down (a CONFIG RESETSTAT in between)', () => {
    expect(() => diffCommandStats(parseCommandStats(after), parseCommandStats(before))).toThrow(/went down/);
    const evalsha = (calls: number, usec: number) =>
      parseCommandStats(`cmdstat_evalsha:calls=${calls},usec=${usec}`);
    expect(() => diffCommandStats(evalsha(10, 90), evalsha(12, 80))).toThrow(/evalsha went down/);
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
