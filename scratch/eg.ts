import { request } from 'undici'
import http from 'node:http'
import { EgressGuard } from '/work/wt-security/src/kit/egress.ts'
const srv = http.createServer((_q, s) => s.end('hi')).listen(0, '127.0.0.1')
await new Promise((r) => srv.once('listening', r))
const port = (srv.address() as any).port
const g = new EgressGuard({ resolve: async (h) => (h === 'inside.test' ? [{ address: '10.0.0.5', family: 4 }] : h === 'loop.test' ? [{address:'127.0.0.1',family:4}] : []) })
const d = g.dispatcher()
for (const u of ['http://[::ffff:a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[::a9fe:a9fe]/', `http://127.0.0.1:${port}/`, 'http://inside.test/', `http://loop.test:${port}/`, 'http://metadata.google.internal./', 'http://[fd00:ec2::254]/', 'http://[::ffff:0.0.0.0]/', 'http://nothing.test/']) {
  try { const r = await request(u, { dispatcher: d }); console.log(u, 'OK', r.statusCode); await r.body.dump() } catch (e: any) { console.log(u, e.name, e.code, e.message, e.cause?.name) }
}
const g2 = new EgressGuard({ allow: [`127.0.0.1:${port}`], resolve: async () => [{address:'127.0.0.1',family:4}] })
const d2 = g2.dispatcher()
for (const u of [`http://127.0.0.1:${port}/`, `http://loop.test:${port}/`, `http://127.0.0.1:1/`]) {
  try { const r = await request(u, { dispatcher: d2 }); console.log(u, 'OK', r.statusCode); await r.body.dump() } catch (e: any) { console.log(u, e.name, e.code, e.message) }
}
for (const u of ['http://[::ffff:a9fe:a9fe]/', 'http://localhost./', 'http://0x7f.1/']) { try { await g.check(u, 'baseUrl'); console.log(u,'ok') } catch (e:any) { console.log(u, e.code, e.message) } }
srv.close(); await d.close(); await d2.close()
