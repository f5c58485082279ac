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
    const servers = [{ id: 'fs', name: 'files' }];
    const listed = qualify([
      { server: servers[0] as (typeof servers)[0], items: tools('read.file', 'read_file', '読む') },
    ]);
    expect(listed.map((entry) => entry.qualifiedName)).toEqual([
      'files__read_file',
      'files__read_file_2',
      'files__item',
    ]);
    expect(resolveQualified('files__read_file', listed, servers)).toEqual({
      serverId: 'fs',
      name: 'read.file',
    });
    expect(resolveQualified('files__item', listed, servers)).toEqual({
      serverId: 'fs',
      name: '読む',
    });
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

  it('names that still collide across the separator get _2 in server order, every time', () => {
    const groups = [
      { server: { id: 'a', name: 'a' }, items: tools('b__c') },
      { server: { id: 'ab', name: 'a__b' }, items: tools('c') },
    ];
    const first = qualify(groups).map((entry) => entry.qualifiedName);
    expect(first).toEqual(['a__b__c', 'a__b__c_2']);
    expect(qualify(groups).map((entry) => entry.qualifiedName)).toEqual(first);
  });

  it('a server that lists a name twice still gets two names', () => {
    const out = qualify([{ server: { id: 'a', name: 'a' }, items: tools('x', 'x') }]);
    expect(out.map((entry) => entry.qualifiedName)).toEqual(['a__x', 'a__x_2']);
  });

  it('a name with no usable characters falls back to the server id', () => {
    expect([...serverPrefixes([{ id: 'jp', name: '日本' }]).values()]).toEqual(['jp']);
  });

  it('resolves from the list, else by a prefix only one server has', () => {
    const servers = [
      { id: 'a', name: 'a' },
      { id: 'ab', name: 'a__b' },
    ];
    const listed = qualify([
      { server: servers[0] as (typeof servers)[0], items: tools('b__c') },
      { server: servers[1] as (typeof servers)[0], items: tools('c') },
    ]);
    expect(resolveQualified('a__b__c_2', listed, servers)).toEqual({ serverId: 'ab', name: 'c' });
    expect(resolveQualified('a__zzz', listed, servers)).toEqual({ serverId: 'a', name: 'zzz' });
    // Both prefixes fit: not guessed.
    expect(resolveQualified('a__b__zzz', listed, servers)).toBeUndefined();
    expect(resolveQualified('nobody__x', listed, servers)).toBeUndefined();
    expect(resolveQualified('a__', listed, servers)).toBeUndefined();
  });
});
