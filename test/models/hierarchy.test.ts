/** Hierarchy positions (docs/queries.md "Hierarchy values"): parsing, arithmetic, order, and the binary sort key. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkHierarchy,
  hierarchyAfterLast,
  hierarchyBefore,
  hierarchyCompare,
  hierarchyHasParent,
  hierarchyNext,
  hierarchyParent,
  hierarchyPrevious,
  hierarchySortKey,
  parseHierarchy,
} from '../../src/models/index.js';

const isCanonical = (v: string): boolean => parseHierarchy(v).ok;
const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const binaryCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An independent oracle for the order: each segment becomes a BigInt at a fixed scale of 10^40
 * (more than any fraction has digits), then tuples compare element by element, shorter first.
 */
function oracleCompare(a: string, b: string): number {
  const nums = (v: string): bigint[] =>
    v.slice(1, -1).split('/').map((s) => {
      const [i, f = ''] = s.replace('-', '').split('.');
      const magnitude = BigInt(i! + f.padEnd(40, '0'));
      return s.startsWith('-') ? -magnitude : magnitude;
    });
  const x = nums(a);
  const y = nums(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return sign(x.length - y.length);
}

describe('parseHierarchy', () => {
  for (const [v, segments] of [
    ['/0/', ['0']],
    ['/1/2/', ['1', '2']],
    ['/3.1/', ['3.1']],
    ['/-1/', ['-1']],
    ['/-0.9/', ['-0.9']],
    ['/0.05/', ['0.05']],
    [`/${Array(20).fill('7').join('/')}/`, Array(20).fill('7')],
    [`/${'9'.repeat(30)}/`, ['9'.repeat(30)]],
    [`/-0.${'1'.repeat(27)}/`, [`-0.${'1'.repeat(27)}`]],
  ] as const) {
    it(`accepts ${v.length > 40 ? `${v.slice(0, 40)}…` : v}`, () => {
      assert.deepEqual(parseHierarchy(v), { ok: true, segments });
    });
  }

  for (const [v, says] of [
    ['', 'must be a position such as /0/, /3.1/ or /1/2/'],
    ['/', 'must be a position such as /0/, /3.1/ or /1/2/'],
    ['//', 'must be a position such as /0/, /3.1/ or /1/2/'],
    ['0', 'must be a position such as /0/, /3.1/ or /1/2/'],
    ['/0', 'must be a position such as /0/, /3.1/ or /1/2/'],
    ['/1//2/', 'with a number between each pair of slashes'],
    ['/a/', 'made of numbers between slashes'],
    ['/ 1/', 'made of numbers between slashes'],
    ['/1-/', 'made of numbers between slashes'],
    ['/٣/', 'made of numbers between slashes'],
    ['/03/', 'without leading zeros'],
    ['/00.5/', 'without leading zeros'],
    ['/-03/', 'without leading zeros'],
    ['/3.10/', 'without trailing zeros'],
    ['/3.0/', 'without trailing zeros'],
    ['/-0.0/', 'without trailing zeros'],
    ['/-0/', 'with 0, not -0'],
    ['/+3/', 'without a plus sign'],
    ['/1e3/', 'without an exponent'],
    ['/1E-3/', 'without an exponent'],
    ['/.5/', 'a digit before the decimal point'],
    ['/-.5/', 'a digit before the decimal point'],
    ['/3./', 'a digit after the decimal point'],
    [`/${'9'.repeat(31)}/`, 'at most 30 characters in each level (one has 31)'],
    [`/${Array(21).fill('7').join('/')}/`, 'at most 20 levels (it has 21)'],
    [`/${'1/'.repeat(5000)}`, 'at most 20 levels of at most 30 characters each'],
  ] as const) {
    it(`refuses ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}, saying "${says}"`, () => {
      const r = parseHierarchy(v);
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.message.startsWith('must '), !r.ok ? r.message : '');
      assert.ok(!r.ok && r.message.includes(says), !r.ok ? r.message : '');
    });
  }

  it('is what checkHierarchy reports', () => {
    assert.deepEqual(checkHierarchy('/-0.9/'), { ok: true, value: '/-0.9/' });
    assert.deepEqual(checkHierarchy('/03/'), { ok: false, message: 'must be written without leading zeros (write /3/ or /0.5/, not /03/ or /00.5/)' });
    assert.deepEqual(checkHierarchy(3), { ok: false, message: 'must be a position such as /0/, /3.1/ or /1/2/' });
  });
});

describe('hierarchy arithmetic', () => {
  const cases: [string, () => unknown, unknown][] = [
    ['/1/2/ has a parent', () => hierarchyHasParent('/1/2/'), true],
    ['/1/ has none', () => hierarchyHasParent('/1/'), false],
    ['parent of /1/2/ is /1/', () => hierarchyParent('/1/2/'), '/1/'],
    ['parent of /1/2/3/ is /1/2/', () => hierarchyParent('/1/2/3/'), '/1/2/'],
    ['parent of /1/ is null', () => hierarchyParent('/1/'), null],
    ['previous of /4/ is /3/', () => hierarchyPrevious('/4/'), '/3/'],
    ['previous of /0/ is /-1/', () => hierarchyPrevious('/0/'), '/-1/'],
    ['previous of /3.5/ is /3/', () => hierarchyPrevious('/3.5/'), '/3/'],
    ['previous of /0.5/ is /0/', () => hierarchyPrevious('/0.5/'), '/0/'],
    ['previous of /0.1/ is /0/', () => hierarchyPrevious('/0.1/'), '/0/'],
    ['previous of /-0.5/ is /-1/', () => hierarchyPrevious('/-0.5/'), '/-1/'],
    ['next of /3.1/ is /4/', () => hierarchyNext('/3.1/'), '/4/'],
    ['next of /1/2.9/ is /1/3/', () => hierarchyNext('/1/2.9/'), '/1/3/'],
    ['previous of /1/ is /0/', () => hierarchyPrevious('/1/'), '/0/'],
    ['next of /3/ is /4/', () => hierarchyNext('/3/'), '/4/'],
    ['next of /1/2/ is /1/3/', () => hierarchyNext('/1/2/'), '/1/3/'],
    ['next of /-1/ is /0/', () => hierarchyNext('/-1/'), '/0/'],
    ['next of /-0.5/ is /0/', () => hierarchyNext('/-0.5/'), '/0/'],
    ['next of /-1.25/ is /-1/', () => hierarchyNext('/-1.25/'), '/-1/'],
    ['/4/ before /15/ is /5/', () => hierarchyBefore('/4/', '/15/'), '/5/'],
    ['/3/ before /4/ is /3.1/', () => hierarchyBefore('/3/', '/4/'), '/3.1/'],
    ['/3.1/ before /3.2/ is /3.11/', () => hierarchyBefore('/3.1/', '/3.2/'), '/3.11/'],
    ['/-1/ before /0/ is /-0.9/', () => hierarchyBefore('/-1/', '/0/'), '/-0.9/'],
    ['/3.5/ before /10/ is /4/', () => hierarchyBefore('/3.5/', '/10/'), '/4/'],
    ['/3.5/ before /4/ is /3.6/', () => hierarchyBefore('/3.5/', '/4/'), '/3.6/'],
    ['/-0.5/ before /0.5/ is /0/', () => hierarchyBefore('/-0.5/', '/0.5/'), '/0/'],
    ['/-2.5/ before /5/ is /-2/', () => hierarchyBefore('/-2.5/', '/5/'), '/-2/'],
    ['/-2.55/ before /-2.5/ is /-2.54/', () => hierarchyBefore('/-2.55/', '/-2.5/'), '/-2.54/'],
    ['/-1.5/ before /-1.4/ is /-1.49/', () => hierarchyBefore('/-1.5/', '/-1.4/'), '/-1.49/'],
    ['/0.09/ before /0.1/ is /0.091/', () => hierarchyBefore('/0.09/', '/0.1/'), '/0.091/'],
    ['/2/3/ before /2/4/ is /2/3.1/', () => hierarchyBefore('/2/3/', '/2/4/'), '/2/3.1/'],
    ['after no record: /0/', () => hierarchyAfterLast(null), '/0/'],
    ['after /4/: /5/', () => hierarchyAfterLast('/4/'), '/5/'],
    ['after /4.5/: /5/', () => hierarchyAfterLast('/4.5/'), '/5/'],
    ['after /2/7/: /3/', () => hierarchyAfterLast('/2/7/'), '/3/'],
    ['after /-0.5/: /0/', () => hierarchyAfterLast('/-0.5/'), '/0/'],
    ['after /-3/: /-2/', () => hierarchyAfterLast('/-3/'), '/-2/'],
  ];
  for (const [name, run, expected] of cases) it(name, () => assert.equal(run(), expected));

  it('refuses before() between non-siblings or toward a smaller or equal value', () => {
    assert.throws(() => hierarchyBefore('/1/2/', '/3/'), { message: 'hierarchy before(): /1/2/ and /3/ are not siblings; both must have the same parent' });
    assert.throws(() => hierarchyBefore('/1/2/', '/2/3/'), /not siblings/);
    assert.throws(() => hierarchyBefore('/4/', '/3/'), { message: 'hierarchy before(): /3/ must be larger than /4/' });
    assert.throws(() => hierarchyBefore('/4/', '/4/'), /must be larger/);
  });

  it('throws for values that are not canonical, without repeating them', () => {
    for (const run of [
      () => hierarchyNext('/03/'),
      () => hierarchyPrevious('x'),
      () => hierarchyParent('/-0/'),
      () => hierarchyHasParent('//'),
      () => hierarchyBefore('/1/', '/+2/'),
      () => hierarchyAfterLast('/3.10/'),
      () => hierarchyCompare('/1/', '/1e1/'),
      () => hierarchySortKey('/<script>/'),
    ]) {
      assert.throws(run, (e: Error) => e instanceof Error && /is not valid: it must/.test(e.message) && !e.message.includes('<script>'));
    }
  });

  it('throws rather than return a segment over 30 characters', () => {
    assert.throws(() => hierarchyNext(`/${'9'.repeat(30)}/`), /more than 30 characters/);
    assert.throws(() => hierarchyPrevious(`/-${'9'.repeat(29)}/`), /more than 30 characters/);
    assert.throws(() => hierarchyAfterLast(`/${'9'.repeat(30)}/`), /more than 30 characters/);
    const a = `/0.${'1'.repeat(28)}/`;
    const b = `/0.${'1'.repeat(27)}2/`;
    assert.throws(() => hierarchyBefore(a, b), /more than 30 characters in one level; renumber/);
  });
});

describe('hierarchy order', () => {
  const ORDERED = [
    '/-10/', '/-1/', '/-0.9/', '/-0.09/', '/0/', '/0/-1/', '/0/5/', '/0/5/0/', '/0/6/', '/0.5/', '/1/',
    '/2/', '/3/', '/3.1/', '/3.11/', '/3.2/', '/4/', '/9.99/', '/10/', '/10/0/', '/100/',
  ];
  it('is depth-first and numeric', () => {
    for (let i = 0; i < ORDERED.length; i++) {
      for (let j = 0; j < ORDERED.length; j++) {
        const [a, b] = [ORDERED[i]!, ORDERED[j]!];
        assert.equal(sign(hierarchyCompare(a, b)), sign(i - j), `${a} vs ${b}`);
        assert.equal(binaryCompare(hierarchySortKey(a), hierarchySortKey(b)), sign(i - j), `keys of ${a} vs ${b}`);
      }
    }
  });

  it('sorts an array like the documented examples', () => {
    const shuffled = ['/10/', '/2/', '/0/5/', '/1/', '/0/'];
    assert.deepEqual([...shuffled].sort(hierarchyCompare), ['/0/', '/0/5/', '/1/', '/2/', '/10/']);
    assert.deepEqual(['/4/', '/3.2/', '/3.11/', '/3/', '/3.1/'].sort(hierarchyCompare), ['/3/', '/3.1/', '/3.11/', '/3.2/', '/4/']);
    assert.deepEqual(['/0/', '/-0.9/', '/-1/'].sort(hierarchyCompare), ['/-1/', '/-0.9/', '/0/']);
  });

  it('has the documented sort-key encoding', () => {
    assert.equal(hierarchySortKey('/0/'), 'N');
    assert.equal(hierarchySortKey('/1/2/'), 'P011.P012.');
    assert.equal(hierarchySortKey('/3.1/'), 'P0131.');
    assert.equal(hierarchySortKey('/-0.9/'), 'M990~');
    assert.equal(hierarchySortKey('/-3.11/'), 'M98688~');
    assert.equal(hierarchySortKey('/0.05/'), 'P0005.');
    assert.match(hierarchySortKey(`/-${'9'.repeat(29)}/${'1'.repeat(30)}/`), /^[\x21-\x7e]+$/);
  });
});

// ---- Properties ---------------------------------------------------------------------------------

const digitsOf = (max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: max }).map((ds) => ds.join(''));

/**
 * One canonical segment of at most `maxLength` characters: integers small, at most 10^15, or up to
 * 29 digits, with fractions of up to `fractionMax` digits and either sign.
 */
function segment(maxLength = 30, fractionMax = 12): fc.Arbitrary<string> {
  const integer = fc.oneof(
    fc.integer({ min: 0, max: 12 }).map(String),
    fc.bigInt({ min: 0n, max: 10n ** 15n }).map(String),
    fc.bigInt({ min: 0n, max: 10n ** 29n }).map(String),
  );
  const fraction = digitsOf(fractionMax).map((f) => f.replace(/0+$/, ''));
  return fc
    .tuple(fc.boolean(), integer, fraction)
    .map(([negative, i, f]) => {
      const s = f ? `${i}.${f}` : i;
      return negative && s !== '0' ? `-${s}` : s;
    })
    .filter((s) => s.length <= maxLength);
}

const path = (seg: fc.Arbitrary<string>, maxDepth = 4) => fc.array(seg, { minLength: 1, maxLength: maxDepth });
const toValue = (segments: string[]): string => `/${segments.join('/')}/`;

/** Two different sibling values, smaller first: random, or the second made close to the first. */
function siblings(seg: fc.Arbitrary<string>): fc.Arbitrary<[string, string]> {
  const close = fc.tuple(seg, digitsOf(4), fc.integer({ min: 1, max: 9 })).map(([s, extra, last]) => {
    const more = `${extra}${last}`;
    return [s, s.includes('.') ? `${s}${more}` : `${s}.${more}`] as const;
  });
  const pair = fc.oneof(fc.tuple(seg, seg), close).filter(([a, b]) => a !== b && b.length <= 30);
  return fc.tuple(path(seg, 3), pair).map(([parent, [x, y]]) => {
    const [a, b] = [toValue([...parent, x]), toValue([...parent, y])];
    return oracleCompare(a, b) < 0 ? [a, b] : [b, a];
  });
}

/** Values that often share prefixes, so that the deeper segments decide. */
const relatedPair = fc
  .tuple(path(segment(), 3), path(segment(), 3), path(segment(), 3), fc.boolean())
  .map(([common, x, y, alsoEqual]) => [toValue([...common, ...x]), alsoEqual ? toValue([...common, ...x]) : toValue([...common, ...y])] as const);

describe('hierarchy properties', () => {
  it('accepts every generated canonical value and refuses its non-canonical spellings', () => {
    fc.assert(
      fc.property(path(segment(29), 20), fc.nat(), (segments, at) => {
        const v = toValue(segments);
        assert.deepEqual(parseHierarchy(v), { ok: true, segments });
        const i = at % segments.length;
        const s = segments[i]!;
        const variants = [`0${s.replace('-', '')}`, `+${s.replace('-', '')}`, s.includes('.') ? `${s}0` : `${s}.0`, `${s}e0`];
        for (const variant of variants) {
          const copy = [...segments];
          copy[i] = variant;
          assert.equal(parseHierarchy(toValue(copy)).ok, false, toValue(copy));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('before(a, b) is canonical and strictly between a and b', () => {
    fc.assert(
      fc.property(siblings(segment(20, 10)), ([a, b]) => {
        const c = hierarchyBefore(a, b);
        assert.ok(isCanonical(c), c);
        assert.equal(hierarchyParent(c), hierarchyParent(a));
        assert.ok(oracleCompare(a, c) < 0 && oracleCompare(c, b) < 0, `${a} < ${c} < ${b}`);
        assert.ok(hierarchyCompare(a, c) < 0 && hierarchyCompare(c, b) < 0);
      }),
      { numRuns: 500 },
    );
  });

  it('before(a, b) on long values is between, or refuses only a result over 30 characters', () => {
    fc.assert(
      fc.property(siblings(segment(30, 28)), ([a, b]) => {
        let c: string;
        try {
          c = hierarchyBefore(a, b);
        } catch (e) {
          assert.match((e as Error).message, /more than 30 characters/);
          return;
        }
        assert.ok(isCanonical(c), c);
        assert.ok(oracleCompare(a, c) < 0 && oracleCompare(c, b) < 0, `${a} < ${c} < ${b}`);
      }),
      { numRuns: 300 },
    );
  });

  it('before() repeated 50 times toward the same bound keeps rising below it', () => {
    fc.assert(
      fc.property(siblings(segment(12, 6)), ([a, b]) => {
        let c = a;
        for (let i = 0; i < 50; i++) {
          const d = hierarchyBefore(c, b);
          assert.ok(isCanonical(d), d);
          assert.ok(hierarchyCompare(c, d) < 0 && hierarchyCompare(d, b) < 0, `${c} < ${d} < ${b}`);
          c = d;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('sort keys order exactly like hierarchyCompare, which matches an independent oracle', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(path(segment()), path(segment())).map(([x, y]) => [toValue(x), toValue(y)] as const), relatedPair), ([a, b]) => {
        const expected = oracleCompare(a, b);
        assert.equal(sign(hierarchyCompare(a, b)), expected, `${a} vs ${b}`);
        assert.equal(binaryCompare(hierarchySortKey(a), hierarchySortKey(b)), expected, `keys of ${a} vs ${b}`);
        assert.match(hierarchySortKey(a), /^[\x21-\x7e]+$/);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(siblings(segment()), ([a, b]) => {
        assert.ok(hierarchySortKey(a) < hierarchySortKey(b), `keys of ${a} < ${b}`);
      }),
      { numRuns: 1000 },
    );
  });

  it('next() and previous() step to whole numbers, inverses on whole positions', () => {
    fc.assert(
      fc.property(path(segment(28)), (segments) => {
        const v = toValue(segments);
        const up = hierarchyNext(v);
        const down = hierarchyPrevious(v);
        assert.ok(isCanonical(up) && isCanonical(down));
        assert.ok(!/\./.test(up.split('/').at(-2)!) && !/\./.test(down.split('/').at(-2)!));
        if (!/\./.test(v.split('/').at(-2)!)) {
          assert.equal(hierarchyPrevious(up), v);
          assert.equal(hierarchyNext(down), v);
        }
        assert.ok(hierarchyCompare(down, v) < 0 && hierarchyCompare(v, up) < 0);
        assert.equal(hierarchyParent(up), hierarchyParent(v));
      }),
      { numRuns: 500 },
    );
  });

  it('hierarchyAfterLast() is a whole number above the first segment, and canonical', () => {
    fc.assert(
      fc.property(path(segment(28)), (segments) => {
        const v = toValue(segments);
        const after = hierarchyAfterLast(v);
        assert.match(after, /^\/-?\d+\/$/);
        assert.ok(isCanonical(after));
        assert.ok(hierarchyCompare(toValue([segments[0]!]), after) < 0);
        assert.ok(hierarchyCompare(hierarchyPrevious(after), toValue([segments[0]!])) <= 0);
      }),
      { numRuns: 300 },
    );
  });
});
