import { describe, expect, it } from 'vitest';
import { qualify, resolveQualified, serverPrefixes } from '../../src/servers/qualify';

const tools = (...names: string[]) => names.map((name) => ({ name }));

describe('qualified names', () => {
  it('are server__tool, with the name made of [A-Za-z0-9_-]', () => {
    const out = qualify([
      { server: { id: 'gh', name: 'GitHub Enterprise' }, items: tools('search', 'open_pr') },
      { server: { id: 'fs', name: 'files' }, items: tools('search') },
    ]);
    expect(out.map((entry) => [entry.qualifiedName, entry.serverId, entry.name])).toEqual([
      ['GitHub_Enterprise__search', 'gh', 'search'],
      ['GitHub_Enterprise__open_pr', 'gh', 'open_pr'],
      ['files__search', 'fs', 'search'],
    ]);
  });

  it('item names are made of [A-Za-z0-9_-] too, and resolve to the item’s own name', () => {
    const server = { id: 'fs', name: 'files' };
    const groups = [{ server, items: tools('read.file', 'write', '読む') }];
    expect(qualify(groups).map((entry) => entry.qualifiedName)).toEqual([
      'files__read_file',
      'files__write',
      'files__item',
    ]);
    expect(resolveQualified('files__read_file', groups)).toEqual({
      serverId: 'fs',
      name: 'read.file',
    });
    expect(resolveQualified('files__item', groups)).toEqual({ serverId: 'fs', name: '読む' });
  });

  it('the separator is configurable', () => {
    const out = qualify([{ server: { id: 'a', name: 'a' }, items: tools('x') }], '.');
    expect(out[0]?.qualifiedName).toBe('a.x');
  });

  it('two servers whose names sanitise alike: the one added first keeps the plain prefix', () => {
    const servers = [
      { id: 's1', name: 'My Server' },
      { id: 's2', name: 'My-Server?' },
      { id: 's3', name: 'My_Server' },
    ];
    expect([...serverPrefixes(servers).values()]).toEqual([
      'My_Server',
      'My-Server',
      'My_Server_2',
    ]);
    const out = qualify(servers.map((server) => ({ server, items: tools('read') })));
    expect(new Set(out.map((entry) => entry.qualifiedName)).size).toBe(3);
  });

  it('a prefix never holds the separator, so a name splits one way whatever the lists hold', () => {
    const groups = [
      { server: { id: 'a', name: 'a' }, items: tools('b__c') },
      { server: { id: 'ab', name: 'a__b' }, items: tools('c') },
    ];
    expect(qualify(groups).map((entry) => entry.qualifiedName)).toEqual(['a__b__c', 'a_b__c']);
    // With `_`, ordinary names would meet: "My Server" + "x" and "My" + "Server_x".
    const plain = [
      { server: { id: 's', name: 'My Server' }, items: tools('x') },
      { server: { id: 'm', name: 'My' }, items: tools('Server_x') },
    ];
    expect(qualify(plain, '_').map((entry) => entry.qualifiedName)).toEqual([
      'MyServer_x',
      'My_Server_x',
    ]);
    expect(resolveQualified('My_Server_x', plain, '_')).toEqual({
      serverId: 'm',
      name: 'Server_x',
    });
    expect(resolveQualified('MyServer_x', plain, '_')).toEqual({ serverId: 's', name: 'x' });
    // A suffix that tells apart names that sanitise alike keeps the rule too.
    const alike = [
      { id: 'a', name: 'A B' },
      { id: 'b', name: 'A.B' },
    ];
    expect([...serverPrefixes(alike, '_').values()]).toEqual(['AB', 'AB2']);
  });

  it('names that two tools of one server could have are given to neither', () => {
    const groups = [{ server: { id: 'a', name: 'a' }, items: tools('x.y', 'x y', 'x', 'x') }];
    expect(qualify(groups).map((entry) => entry.qualifiedName)).toEqual(['a__x']);
    expect(resolveQualified('a__x_y', groups)).toEqual({
      problem: expect.stringMatching(/"x\.y", "x y"/),
    });
    expect(resolveQualified('a__x', groups)).toEqual({ serverId: 'a', name: 'x' });
  });

  it('a name with no usable characters falls back to the server id', () => {
    expect([...serverPrefixes([{ id: 'jp', name: '日本' }]).values()]).toEqual(['jp']);
  });

  it('resolves from the list, else by its prefix while that server’s list has not loaded', () => {
    const a = { id: 'a', name: 'a' };
    const ab = { id: 'ab', name: 'a__b' };
    const loaded = [
      { server: a, items: tools('b__c') },
      { server: ab, items: tools('c') },
    ];
    expect(resolveQualified('a_b__c', loaded)).toEqual({ serverId: 'ab', name: 'c' });
    expect(resolveQualified('a__b__c', loaded)).toEqual({ serverId: 'a', name: 'b__c' });
    // Not in a's list (yet): a's to answer, never another server's.
    expect(resolveQualified('a__zzz', loaded)).toEqual({ serverId: 'a', name: 'zzz' });
    const pending = [
      { server: a, items: undefined },
      { server: ab, items: undefined },
    ];
    expect(resolveQualified('a__b__zzz', pending)).toEqual({ serverId: 'a', name: 'b__zzz' });
    for (const name of ['nobody__x', 'a__', 'a']) {
      expect(resolveQualified(name, pending)).toEqual({ problem: expect.any(String) });
    }
  });
});
