/**
 * The providers named `google` and `github` pointed elsewhere from the environment (docs/users.md
 * "Providers"): `google` at a company's OpenID Connect issuer (oidc-provider on 127.0.0.1), given
 * as its issuer or as its discovery document's address, and `github` at a GitHub Enterprise Server
 * (a small stand-in on 127.0.0.1 speaking `/login/oauth/…` and `/api/v3/user`). Black-box: the
 * sign-in page's form-action names them, and a visitor signs in through each.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type Served } from '../helpers.js';
import { TestVisitor } from '../support/visitor.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const APP = {
  '👤.yaml': 'providers: [google, github]\nauth: required\n\ndefault:\n  👤.User.name: read\n',
  'auth/👤.yaml': 'auth: optional\n',
  'auth/index.html':
    "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Me, Providers} from '👤' }}\n" +
    "<link itemprop='content-security-policy' data-form-action-auth='true'></head><body>\n" +
    '{{#Providers.all as provider}}<form id="{{provider.type}}" method="post" action="{{provider.authPath}}"><button>{{provider.name}}</button></form>\n{{/Providers.all}}\n</body></html>\n',
  'me/GET.js': "import {Me} from '👤';\n({name: Me.name, email: Me.email});\n",
};

/** A GitHub Enterprise Server stand-in: the OAuth pages under /login/oauth/, the API under /api/v3/. */
async function startEnterprise(): Promise<{ base: string; clientId: string; clientSecret: string; paths: string[]; stop(): Promise<void> }> {
  const clientId = 'ghe-' + randomBytes(6).toString('hex');
  const clientSecret = randomBytes(16).toString('hex');
  const codes = new Map<string, { challenge: string; redirect: string }>();
  const tokens = new Set<string>();
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ghe.test');
    paths.push(url.pathname);
    const json = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId || q.get('code_challenge_method') !== 'S256') return json(400, { error: 'bad request' });
      const code = randomBytes(8).toString('hex');
      codes.set(code, { challenge: q.get('code_challenge')!, redirect: q.get('redirect_uri')! });
      const back = new URL(q.get('redirect_uri')!);
      back.search = new URLSearchParams({ code, state: q.get('state')! }).toString();
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret || !grant || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) {
          return json(200, { error: 'bad_verification_code' });
        }
        const token = 'ghe_' + randomBytes(10).toString('hex');
        tokens.add(token);
        json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const bearer = /^(?:Bearer|token) (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !tokens.has(bearer)) return json(401, { message: 'Bad credentials' });
    if (url.pathname === '/api/v3/user') return json(200, { id: 9001, login: 'lamplighter', name: 'Lamp Lighter', avatar_url: null });
    if (url.pathname === '/api/v3/user/emails') return json(200, [{ email: 'lamp@corp.example', primary: true, verified: true, visibility: null }]);
    return json(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, clientId, clientSecret, paths, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

for (const form of ['issuer', 'discovery document'] as const) {
  describe(`google and github pointed elsewhere (google by its ${form})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    let ghe: Awaited<ReturnType<typeof startEnterprise>>;
    const saved = { ...process.env };

    before(async () => {
      op = await startOidcProvider();
      ghe = await startEnterprise();
      process.env.LANEWAY_AUTH_GOOGLE_CLIENT_ID = op.clientId;
      process.env.LANEWAY_AUTH_GOOGLE_SECRET = op.clientSecret;
      process.env.LANEWAY_AUTH_GOOGLE_ISSUER = form === 'issuer' ? op.issuer : `${op.issuer}/.well-known/openid-configuration`;
      process.env.LANEWAY_AUTH_GITHUB_CLIENT_ID = ghe.clientId;
      process.env.LANEWAY_AUTH_GITHUB_SECRET = ghe.clientSecret;
      process.env.LANEWAY_AUTH_GITHUB_URL = ghe.base;
      s = await serve(APP);
      await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
    });
    after(async () => {
      await s?.close();
      await op?.stop();
      await ghe?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    const start = async (v: TestVisitor, id: string) => {
      const page = await v.get('/auth/?next=%2Fme');
      const action = new RegExp(`<form id="${id}" method="post" action="([^"]+)"`).exec(page.text)![1]!.replace(/&amp;/g, '&');
      const started = await v.post(action);
      assert.equal(started.status, 303);
      return new URL(String(started.headers.location));
    };

    it("the sign-in page's form-action names the company's servers, not Google's or GitHub's", async () => {
      const page = await new TestVisitor(s.port).get('/auth/');
      const policy = String(page.headers['content-security-policy']);
      const formAction = /form-action ([^;]*)/.exec(policy)![1]!.split(' ');
      assert.deepEqual(formAction.sort(), ["'self'", op.issuer, ghe.base].sort());
    });

    it('google signs in through the configured issuer', async () => {
      const v = new TestVisitor(s.port);
      const to = await start(v, 'google');
      assert.equal(to.origin, op.issuer, 'sent to the configured issuer');
      const back = await op.login(to, { account: 'ann' });
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303);
      assert.deepEqual(JSON.parse((await v.get('/me', { Accept: 'application/json' })).text), { name: 'Ann Example', email: 'ann@example.com' });
    });

    it('github signs in through https://HOST/login/oauth/… and reads https://HOST/api/v3/user', async () => {
      const v = new TestVisitor(s.port);
      const to = await start(v, 'github');
      assert.equal(to.origin + to.pathname, `${ghe.base}/login/oauth/authorize`);
      const res = await fetch(to, { redirect: 'manual' });
      const back = new URL(res.headers.get('location')!);
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303, done.text);
      assert.deepEqual(JSON.parse((await v.get('/me', { Accept: 'application/json' })).text), { name: 'Lamp Lighter', email: 'lamp@corp.example' });
      assert.deepEqual([...new Set(ghe.paths)], ['/login/oauth/authorize', '/login/oauth/access_token', '/api/v3/user', '/api/v3/user/emails']);
    });
  });
}
