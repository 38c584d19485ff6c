#!/usr/bin/env node
// redlock_adapter.js - locklab adapter for node-redlock (npm redlock 4.2.0)
// over ioredis 6: one ioredis client per independent master named in
// LOCKLAB_REDIS_NODES, one Redlock over them with the library's defaults
// (drift factor 0.01, retry delay 200 ms, jitter 100 ms), its retry count
// sized so that the retries fill the request's WAIT_MS. A LockError from
// lock() is `timeout` (the attempts ran out); a LockError from unlock() is
// `not-owner` (no majority still held our value). Redlock gives no fencing
// token and is not reentrant: `ready` names no capability.
// Protocol: docs/adapters.md. Dependencies: `npm ci` in this folder
// (scripts/install-deps does it).
'use strict';

const readline = require('readline');
const Redis = require('ioredis');
const Redlock = require('redlock');

const RETRY_DELAY_MS = 200;

function say(line) {
  process.stdout.write(line + '\n');
}

function oneLine(err) {
  return String((err && err.name ? err.name + ': ' : '') + (err && err.message || err))
    .replace(/\n/g, ' ').slice(0, 200);
}

async function main() {
  const nodes = (process.env.LOCKLAB_REDIS_NODES || '').split(',').filter(Boolean);
  const clients = nodes.map((hp) => {
    const i = hp.lastIndexOf(':');
    return new Redis({ host: hp.slice(0, i), port: Number(hp.slice(i + 1)) });
  });
  await Promise.all(clients.map((c) => c.ping()));
  const redlock = new Redlock(clients, { retryDelay: RETRY_DELAY_MS });
  redlock.on('clientError', () => {}); // a node's error is a missing vote, as designed
  const held = new Map();

  async function handle(words) {
    if (words.length === 4 && words[0] === 'acquire') {
      const [, key, ttl, wait] = words;
      const retryCount = Math.max(1, Math.ceil(Number(wait) / RETRY_DELAY_MS));
      try {
        held.set(key, await redlock.lockWithOptions(key, Number(ttl), { retryCount }));
        return 'granted';
      } catch (err) {
        return err instanceof Redlock.LockError ? 'timeout' : 'error ' + oneLine(err);
      }
    }
    if (words.length === 2 && words[0] === 'release') {
      const lock = held.get(words[1]);
      held.delete(words[1]);
      if (!lock) return 'error release of a key this adapter does not hold';
      try {
        await lock.unlock();
        return 'released';
      } catch (err) {
        return err instanceof Redlock.LockError ? 'not-owner' : 'error ' + oneLine(err);
      }
    }
    return 'error unknown request';
  }

  say('ready');
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const words = line.trim().split(/\s+/);
    if (words.length === 1 && words[0] === 'quit') break;
    say(await handle(words));
  }
  clients.forEach((c) => c.disconnect());
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write('redlock adapter: ' + oneLine(err) + '\n');
  process.exit(1);
});
