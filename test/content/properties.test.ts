/**
 * The properties parser (src/content/properties.ts): `/🎨.scss` declarations, categories and
 * titles, value kinds, ICU messages as functions, what Sass reads, and every error at its line and
 * column.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DiagnosticList, formatDiagnostic } from '../../src/diag/index.js';
import { camelCase, parseProperties, readProperties, type AppProperties, type PropertiesOptions } from '../../src/content/properties.js';

function parse(source: string, options: Partial<PropertiesOptions> = {}): { props: AppProperties; lines: string[] } {
  const diagnostics = new DiagnosticList();
  const props = parseProperties(source, { diagnostics, ...options });
  return { props, lines: diagnostics.sorted().map(formatDiagnostic) };
}

/** The properties of a file that must parse without any diagnostic. */
function clean(source: string, options: Partial<PropertiesOptions> = {}): AppProperties {
  const { props, lines } = parse(source, options);
  assert.deepEqual(lines, []);
  return props;
}

const call = (props: AppProperties, name: string, ...args: unknown[]): unknown => (props.namespace[name] as (...a: unknown[]) => unknown)(...args);

describe('declarations', () => {
  it('reads names, kinds and values in file order', () => {
    const props = clean(
      "$ui-home: 'Home';\n$standalone: true;\n$off: false;\n$ratio: 1.5;\n$gap: 4px;\n$theme-color: #336699;\n$accent: rgb(10, 20, 30);\n$paper: aliceblue;\n$icon-sm: url(/img/icon.png);\n$quoted-url: url('/img/a b.png');\n",
    );
    assert.deepEqual(
      props.list.map((p) => [p.name, p.key, p.kind, p.value]),
      [
        ['ui-home', 'uiHome', 'string', 'Home'],
        ['standalone', 'standalone', 'boolean', true],
        ['off', 'off', 'boolean', false],
        ['ratio', 'ratio', 'number', 1.5],
        ['gap', 'gap', 'number', '4px'],
        ['theme-color', 'themeColor', 'color', '#336699'],
        ['accent', 'accent', 'color', 'rgb(10, 20, 30)'],
        ['paper', 'paper', 'color', 'aliceblue'],
        ['icon-sm', 'iconSm', 'url', '/img/icon.png'],
        ['quoted-url', 'quotedUrl', 'url', '/img/a b.png'],
      ],
    );
  });

  it('turns dashes into camelCase, digits included', () => {
    assert.equal(camelCase('success-add'), 'successAdd');
    assert.equal(camelCase('icon-2x'), 'icon2x');
    assert.equal(camelCase('BillingSetupFinished'), 'BillingSetupFinished');
  });

  it('applies @category to the declarations after it and @title to the next one only', () => {
    const props = clean(
      "$a: red;\n/**\n * @category messages\n */\n/** @title Home link */\n$ui-home: 'Home';\n$ui-sign-in: 'Sign In';\n/** @category options */\n$mode: true;\n",
    );
    assert.deepEqual(
      props.list.map((p) => [p.name, p.category, p.title]),
      [
        ['a', 'style', undefined],
        ['ui-home', 'messages', 'Home link'],
        ['ui-sign-in', 'messages', undefined],
        ['mode', 'options', undefined],
      ],
    );
  });

  it('skips line and block comments, accepts !default, and a last declaration without ";"', () => {
    const props = clean("// a comment\n$a: 'x' !default; // trailing\n/* block\n $nope: 1; */\n$b: 2");
    assert.deepEqual(props.list.map((p) => [p.name, p.value]), [['a', 'x'], ['b', 2]]);
  });

  it('continues a string on the next line after a backslash, and reads CSS escapes (a hex escape eats one space)', () => {
    const props = clean("$long: 'first line \\\nsecond line';\n$q: 'it\\'s';\n$hex: \"\\2014 dash\";\n$crlf: 'a\\\r\nb';\n");
    assert.deepEqual(props.list.map((p) => p.value), ['first line second line', "it's", '—dash', 'ab']);
  });

  it('gives an empty table without a properties file', () => {
    const diagnostics = new DiagnosticList();
    const props = readProperties({ read: () => undefined, list: () => undefined }, { diagnostics });
    assert.equal(props.exists, false);
    assert.equal(props.list.length, 0);
    assert.equal(props.scss, undefined);
    assert.deepEqual(diagnostics.items, []);
  });
});

describe('messages', () => {
  it('makes each string a function; a message without arguments gives its text', () => {
    const props = clean("$ui-home: 'Home';\n$quote: \"It''s {0}''s turn\";\n");
    assert.equal(typeof props.namespace['ui-home'], 'function');
    assert.equal(props.namespace['ui-home'], props.namespace.uiHome);
    assert.equal(call(props, 'uiHome'), 'Home');
    assert.equal(call(props, 'quote', 'Ada'), "It's Ada's turn");
  });

  it('formats positional arguments, then one object of named arguments', () => {
    const props = clean("$added: 'Added ‘{0}’ to {1}';\n$hello: 'Hello, {name}';\n$mixed: '{0} by {who}';\n");
    assert.equal(call(props, 'added', 'Milk', 'Groceries'), 'Added ‘Milk’ to Groceries');
    assert.equal(call(props, 'hello', { name: 'Ada' }), 'Hello, Ada');
    assert.equal(call(props, 'mixed', 'Notes', { who: 'Ada' }), 'Notes by Ada');
    assert.deepEqual([props.lookup('mixed')!.arity, props.lookup('mixed')!.named], [1, ['who']]);
  });

  it('formats plurals and numbers in the locale of the manifest', () => {
    const de = clean("$tasks: '{0, plural, one {# Aufgabe} other {# Aufgaben}}';\n$total: 'Summe: {0, number}';\n", { locale: 'de-DE' });
    assert.equal(call(de, 'tasks', 1), '1 Aufgabe');
    assert.equal(call(de, 'tasks', 1234), '1.234 Aufgaben');
    assert.equal(call(de, 'total', 1234.5), 'Summe: 1.234,5');
    const en = clean("$total: 'Total: {0, number}';\n");
    assert.equal(call(en, 'total', 1234.5), 'Total: 1,234.5');
  });

  it('treats <b> as text (no rich-text tags) and null arguments as empty', () => {
    const props = clean("$b: '<b>{0}</b>';\n");
    assert.equal(call(props, 'b', null), '<b></b>');
  });

  it('refuses a call with fewer arguments than the message uses', () => {
    const props = clean("$hello: 'Hello, {0} and {1}';\n$named: 'Hi {name}';\n");
    assert.throws(() => call(props, 'hello', 'a'), { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: /takes 2 arguments; 1 given/ });
    assert.throws(() => call(props, 'named'), { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: /needs the named argument name/ });
  });

  it('reports a malformed message at its line and column in the file', () => {
    const { lines } = parse("$ok: 'x';\n$bad: 'Hello {0';\n$sel: 'x {n, select, a {A}}';\n$type: \"{0, money}\";\n");
    assert.deepEqual(lines, [
      "🎨.scss:2:14: $bad is not a well-formed ICU message: an argument is not closed: add } (a straight ' quotes ICU syntax: write ’ for an apostrophe, or '' for a straight one) [LW_SETTINGS_MESSAGE]",
      "🎨.scss:3:27: $sel is not a well-formed ICU message: a plural or select argument needs an other {…} case (a straight ' quotes ICU syntax: write ’ for an apostrophe, or '' for a straight one) [LW_SETTINGS_MESSAGE]",
      "🎨.scss:4:13: $type is not a well-formed ICU message: unknown argument type: use number, date, time, plural, select or selectordinal (a straight ' quotes ICU syntax: write ’ for an apostrophe, or '' for a straight one) [LW_SETTINGS_MESSAGE]",
    ]);
  });

  it('points into a continued string on the line where the problem is', () => {
    const { lines } = parse("$m: 'first \\\n  second {0';\n");
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^🎨\.scss:2:10: \$m is not a well-formed ICU message/);
  });
});

describe('errors and warnings', () => {
  it('reports each mistake at its line and column, and keeps reading', () => {
    const { props, lines } = parse(
      [
        '$ok: 1;',
        '.rule { color: red; }',
        '$2bad: 1;',
        "$open: 'not closed;",
        '$no-colon 1;',
        '$no-semi: 1',
        '$after: 2;',
        '$empty: ;',
        '$ok: 3;',
        '$to-string: 1;',
        '$then: 1;',
        '$fooBar: 1;',
        '$foo-bar: 2;',
        '$pic: url(img/x.png);',
        '$list: Helvetica, sans-serif;',
        '/** @category colours */',
        '$last: 1;',
      ].join('\n') + '\n',
    );
    assert.deepEqual(lines, [
      '🎨.scss:2:1: unexpected ".rule": the properties file holds $name: value; declarations and comments only (rules and imports belong in another .scss file) [LW_SETTINGS_PROPERTIES_SYNTAX]',
      '🎨.scss:3:1: "$2bad" is not a property name: use letters, digits and single dashes, starting with a letter ($ui-home) [LW_SETTINGS_PROPERTY_NAME]',
      "🎨.scss:4:8: the string of $open is not closed: end it with ' (a line of a longer string ends with \\) [LW_SETTINGS_PROPERTIES_SYNTAX]",
      '🎨.scss:5:11: expected ":" after $no-colon: write $no-colon: value; [LW_SETTINGS_PROPERTIES_SYNTAX]',
      '🎨.scss:6:12: missing ";" after the value of $no-semi [LW_SETTINGS_PROPERTIES_SYNTAX]',
      '🎨.scss:8:1: $empty has no value: write $empty: value; [LW_SETTINGS_PROPERTIES_SYNTAX]',
      '🎨.scss:9:1: $ok is defined twice; the first is at line 1: keep one [LW_SETTINGS_PROPERTY_DUPLICATE]',
      '🎨.scss:10:1: $to-string is a name properties cannot take (toString belongs to every object); rename it [LW_SETTINGS_PROPERTY_NAME]',
      '🎨.scss:11:1: $then is a name properties cannot take (then belongs to every object); rename it [LW_SETTINGS_PROPERTY_NAME]',
      '🎨.scss:13:1: $foo-bar and $fooBar are the same name in scripts (fooBar); the first is at line 12: keep one [LW_SETTINGS_PROPERTY_DUPLICATE]',
      '🎨.scss:14:7: url(img/x.png) of $pic is not an absolute path of the app: write url(/images/name.png) [LW_SETTINGS_PROPERTY_URL]',
      '🎨.scss:15:8: warning: $list: Helvetica, sans-serif is not a string, boolean, number, color or url(); Sass reads it as written, views and scripts see its text (quote it to make it a string) [LW_SETTINGS_PROPERTY_VALUE]',
      '🎨.scss:16:1: warning: @category colours is not style, messages or options; the properties after it keep the category style [LW_SETTINGS_PROPERTY_CATEGORY]',
    ]);
    assert.deepEqual(props.list.map((p) => p.name), ['ok', 'after', 'fooBar', 'list', 'last']);
    assert.equal(props.lookup('list')!.value, 'Helvetica, sans-serif');
  });

  it('reports an unclosed comment', () => {
    assert.deepEqual(parse('$a: 1;\n/* open\n$b: 2;\n').lines, ['🎨.scss:2:1: a comment is not closed: end it with */ [LW_SETTINGS_PROPERTIES_SYNTAX]']);
  });

  it('checks that url() names a public file when it can', () => {
    const fileStatus = (p: string) => (p === '/img/a.png' ? 'public' : p === '/_img/b.png' ? 'private' : undefined) as 'public' | 'private' | undefined;
    const { lines } = parse('$a: url(/img/a.png);\n$b: url(/_img/b.png);\n$c: url("/img/none.png");\n', { fileStatus });
    assert.deepEqual(lines, [
      '🎨.scss:2:5: url(/_img/b.png) of $b is private (a name starting with _ or .) and never served: name a public file of the app [LW_SETTINGS_PROPERTY_URL]',
      '🎨.scss:3:5: url(/img/none.png) of $c does not exist: name a public file of the app [LW_SETTINGS_PROPERTY_URL]',
    ]);
  });
});

describe('what Sass reads', () => {
  it('has one declaration per property on the line it is written, strings double-quoted, without interpolation', () => {
    const props = clean("/** @category messages */\n$title: \"It''s #'{'x'}'\";\n$hello: 'Hello, {0}';\n$on: true;\n$c: #fff !default;\n$long: 'a \\\nb';\n$pic: url(/p.png);\n$n: 2px;\n");
    assert.deepEqual(props.scss!.split('\n'), [
      '',
      '$title: "It\'s \\#{x}";',
      '$hello: "Hello, {0}";',
      '$on: true;',
      '$c: #fff !default;',
      '$long: "a b";',
      '',
      '$pic: url("/p.png");',
      '$n: 2px;',
      '',
    ]);
  });
});

describe('checks for views and imports', () => {
  const props = clean("$ui-home: 'Home';\n$hello: 'Hello, {0}';\n$hi: 'Hi {name}';\n$flag: true;\n");

  it('knows names as written and in camelCase, and the namespace', () => {
    assert.equal(props.checkImport('ui-home'), true);
    assert.equal(props.checkImport('uiHome'), true);
    assert.equal(props.checkImport('*'), true);
    assert.equal(props.checkImport('Msg'), true);
    assert.equal(props.importValue('Msg'), props.namespace);
    assert.match(String(props.checkImport('nope')), /^\/🎨\.scss defines no property "nope"; it defines ui-home, hello, hi, flag$/);
  });

  it('checks paths and arguments of view tags', () => {
    const none = { args: 0, named: [] };
    assert.equal(props.checkViewPath('*', ['ui-home'], none), true);
    assert.equal(props.checkViewPath('*', ['hello'], { args: 1, named: [] }), true);
    assert.equal(props.checkViewPath('*', ['hi'], { args: 0, named: ['name'] }), true);
    assert.equal(props.checkViewPath('hello', [], { args: 1, named: [] }), true);
    const verdicts = [
      props.checkViewPath('*', ['nope'], none),
      props.checkViewPath('*', ['flag', 'x'], none),
      props.checkViewPath('*', ['hello'], none),
      props.checkViewPath('*', ['ui-home'], { args: 1, named: [] }),
      props.checkViewPath('*', ['hi'], none),
      props.checkViewPath('*', ['flag'], { args: 1, named: [] }),
    ];
    assert.deepEqual(verdicts, [
      { code: 'LW_SETTINGS_UNKNOWN_PROPERTY', message: '/🎨.scss defines no property "nope"; it defines ui-home, hello, hi, flag' },
      { code: 'LW_SETTINGS_UNKNOWN_PROPERTY', message: '🎨.flag is a boolean property; it has no member "x"' },
      { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: 'the message 🎨.hello takes 1 argument ({0}); 0 given' },
      { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: 'the message 🎨.ui-home takes no arguments; 1 given' },
      { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: 'the message 🎨.hi needs name=…' },
      { code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message: '🎨.flag is a boolean, not a message: it takes no arguments' },
    ]);
  });

  it('says there is no properties file', () => {
    const empty = readProperties({ read: () => undefined, list: () => undefined }, { diagnostics: new DiagnosticList() });
    assert.equal(empty.checkImport('uiHome'), 'there is no property "uiHome": the app has no /🎨.scss; define it there as $ui-home: …;');
  });
});
