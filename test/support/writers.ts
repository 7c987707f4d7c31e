/**
 * An app whose requests write two tables in one transaction, in both orders, and 8 clients that
 * write through it: what the tests of instances starting while others serve writes run
 * (test/app/start-while-writing.test.ts, test/cli/start-while-writing.test.ts).
 */
import assert from 'node:assert/strict';

export const WRITING_APP = {
  '📦/🌐Tally.yaml': 'name:\n  type: string\n  unique: true\ncount:\n  type: integer\n  init: 0\n',
  '📦/🌐Mark.yaml': 'label: string\nat: timestamp\n',
  '📦/Mark/🌐Tag.yaml': 'n: integer\n',
  // Two tables in each transaction, in both orders: a start that locked them one after the other
  // would deadlock with one kind or the other.
  'marks/POST.js':
    "import {Mark, Tag, Tally} from '📦';\nimport {n} from 'form';\nconst m = new Mark().label(n).at(Date.now());\nnew Tag(m).n(1);\n" +
    "let t = Tally.name(n).optional();\nif (t == null) { t = new Tally().name(n); }\nt.count += 1;\n({});\n",
  'tallies/POST.js':
    "import {Mark, Tally} from '📦';\nimport {n} from 'form';\nlet t = Tally.name(n).optional();\nif (t == null) { t = new Tally().name(n); }\nt.count += 1;\n" +
    'new Mark().label(n).at(Date.now());\n({});\n',
};

export const WRITE_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

/** Writes through `post` from 8 clients until `stop()`: how many succeeded, what failed. */
export async function writers(post: (path: string, body: string) => Promise<{ status: number; text: string }>) {
  // The tallies exist first: two requests creating the same one at once conflict (409), rightly.
  for (const n of ['t0', 't1', 't2']) assert.equal((await post('/tallies', `n=${n}`)).status, 200);
  let stopped = false;
  /** Answers other than 200. */
  const failures: string[] = [];
  /** Requests that got no answer at all (the connection broke). */
  const lost: string[] = [];
  let ok = 0;
  const clients = Array.from({ length: 8 }, async (_, i) => {
    // Bounded: a test that never stops its clients still ends.
    for (let k = 0; !stopped && k < 50_000; k++) {
      const path = i % 2 ? '/marks' : '/tallies';
      try {
        const r = await post(path, `n=t${i % 3}`);
        if (r.status === 200) ok++;
        else failures.push(`POST ${path}: ${r.status} ${r.text.slice(0, 300)}`);
      } catch (e) {
        lost.push(`POST ${path}: ${(e as Error).message}`);
      }
    }
  });
  return {
    get ok() {
      return ok;
    },
    failures,
    lost,
    /** Resolves once `n` more writes have succeeded (or 30 s have passed, or a write failed). */
    async more(n: number): Promise<void> {
      const target = ok + n;
      const until = Date.now() + 30_000;
      while (ok < target && failures.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    },
    async stop() {
      stopped = true;
      await Promise.all(clients);
    },
  };
}

