// OpenTelemetry traces to a real OTLP/HTTP receiver started here (node:http, the exporter's JSON
// export): a card made upstream gives one connected trace from the upstream's webhook through the
// ingress, the recording (attribution, matching), the delivery to a tool, the tool run and its
// step to the step's upstream request; the push to an agent's webhook carries the trace's
// traceparent; a REST step run called with a traceparent joins the caller's trace. No credential,
// secret or payload in any attribute. With no backend answering, requests go on and the spans are
// dropped and counted.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, test } from 'node:test'
import { eventually, Receiver } from '../helpers/receiver.ts'
import { startTestService, type TestService } from '../helpers/service.ts'
import { taskboardRest } from '../helpers/taskboard.ts'

interface Span {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status?: { code?: number }
}

/** An OTLP/HTTP (JSON) trace receiver: every span it was sent, with its attributes flattened. */
async function otlpReceiver() {
  const spans: Span[] = []
  const requests: string[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      requests.push(`${req.method} ${req.url} ${req.headers['content-type']}`)
      const doc = JSON.parse(body)
      for (const rs of doc.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) {
            const attributes: Record<string, unknown> = {}
            for (const a of s.attributes ?? []) attributes[a.key] = Object.values(a.value ?? {})[0]
            spans.push({ ...s, attributes, service: rs.resource?.attributes } as Span)
          }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** The spans of one trace, each with its chain of parents' names. */
function chainOf(spans: Span[], span: Span): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  const chain: string[] = []
  for (let s: Span | undefined = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
    chain.unshift(s.name)
  return chain
}

let t: TestService | undefined
let collector: Awaited<ReturnType<typeof otlpReceiver>> | undefined
after(async () => {
  await t?.close()
  await collector?.close()
})

test('an upstream change, one trace: webhook → ingress → recording → delivery → tool run → step → upstream request; pushes carry it', async (ctx) => {
  collector = await otlpReceiver()
  t = await startTestService({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'patchbay-test' },
  })
  const demo = t.taskboard.demo
  const conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: demo.key, token: demo.token, secret: demo.secret },
    })
  ).body.id
  const agent = (
    await t.api('POST', '/v1/agents', {
      name: 'Traced agent',
      scope: { boards: [demo.boardId] },
      connectionIds: [conn],
      delivery: { type: 'stream' },
    })
  ).body
  const tool = await t.api('POST', `/v1/agents/${agent.id}/tools`, {
    name: 'Read the new card',
    steps: [
      { stepId: 'taskboard.get_card', connectionId: conn, input: { idCard: '{{event.data.card.id}}' } },
    ],
  })
  assert.equal(tool.status, 201, JSON.stringify(tool.body))
  const trig = await t.api('POST', `/v1/agents/${agent.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: demo.boardId },
    target: { type: 'tool', toolId: tool.body.id },
  })
  assert.equal(trig.status, 201, JSON.stringify(trig.body))
  // A second agent has the same events pushed to its webhook.
  const receiver = await new Receiver().start()
  // Closed however the test ends: an open receiver kept the file's process alive after a failure.
  ctx.after(() => receiver.close())
  const pushed = (
    await t.api('POST', '/v1/agents', {
      name: 'Pushed agent',
      scope: { boards: [demo.boardId] },
      connectionIds: [conn],
      delivery: { type: 'webhook', url: receiver.url },
    })
  ).body
  receiver.secret = pushed.signingSecret
  await t.api('POST', `/v1/agents/${pushed.id}/triggers`, {
    trigger: 'taskboard.new_card',
    connectionId: conn,
    config: { idBoard: demo.boardId },
  })

  const cardName = `Traced card ${Math.random().toString(36).slice(2, 8)}`
  await taskboardRest(t.taskboard, 'POST', '/1/cards', { idList: demo.listIds[0], name: cardName })
  await eventually(
    async () => collector!.spans.filter((s) => s.name === 'GET /1/cards/{id}' && s.kind === 3).length,
    (n) => n >= 1,
  )
  await eventually(
    async () => receiver.received.length,
    (n) => n >= 1,
  )
  // The chain from the webhook down to the upstream request, and spans beside it in the same trace.
  const chainNames = [
    'POST /hooks/:connector/:hookId',
    'ingress taskboard',
    'record taskboard events',
    'deliver to tool',
    'tool run',
    'step taskboard.get_card',
    'GET /1/cards/{id}',
  ]
  const besideNames = ['attribution', 'matching', 'deliver taskboard.new_card']
  // Spans reach the collector in batches, each after its span ends: the push's own span ends after
  // the receiver answered it, and may come a batch later than the push (under load, seconds).
  await eventually(
    async () => [...chainNames, ...besideNames].filter((n) => !collector!.spans.some((s) => s.name === n)),
    (missing) => missing.length === 0,
  )

  const request = collector.spans.find((s) => s.name === 'GET /1/cards/{id}')!
  const trace = collector.spans.filter((s) => s.traceId === request.traceId)
  const chain = chainOf(trace, request)
  assert.deepEqual(chain, chainNames)
  const names = new Set(trace.map((s) => s.name))
  for (const n of besideNames) assert.ok(names.has(n), `${n} in ${[...names]}`)
  assert.equal(request.attributes['http.request.method'], 'GET')
  assert.equal(request.attributes['url.template'], '/1/cards/{id}')
  assert.equal(request.attributes['http.response.status_code'], 200)
  assert.equal(typeof request.attributes['patchbay.upstream.pacing_wait_ms'], 'number')
  assert.equal(typeof request.attributes['patchbay.upstream.rate_budget_wait_ms'], 'number')
  const step = trace.find((s) => s.name === 'step taskboard.get_card')!
  assert.equal(step.attributes['patchbay.step.attempts'], 1)
  assert.equal(step.attributes['patchbay.step.status'], 'succeeded')

  // The push to the webhook agent carries the trace (its own spans would join it).
  const push = receiver.received[0]
  const traceparent = String(push.headers.traceparent)
  assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  assert.equal(traceparent.split('-')[1], request.traceId)
  const deliver = trace.find((s) => s.name === 'deliver taskboard.new_card')!
  assert.equal(traceparent.split('-')[2], deliver.spanId)
  assert.equal(deliver.attributes['patchbay.delivery.outcome'], 'delivered')

  // Never a secret, a credential or a payload in an attribute.
  const everything = JSON.stringify(collector.spans)
  for (const secret of [demo.key, demo.token, demo.secret, pushed.signingSecret, t.adminKey, cardName])
    assert.ok(!everything.includes(secret), `no ${secret.slice(0, 6)}… in the spans`)
  assert.ok(
    collector.requests.every((r) => r.startsWith('POST /v1/traces application/json')),
    collector.requests[0],
  )
})

test("a REST step run with the caller's traceparent joins the caller's trace, down to the upstream request", async () => {
  const callerTrace = 'a'.repeat(31) + '1'
  const callerSpan = 'b'.repeat(15) + '2'
  const conn = (await t!.api('GET', '/v1/connections')).body.connections[0].id
  const res = await fetch(`${t!.url}/v1/steps/taskboard.create_card/run`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t!.adminKey}`,
      'content-type': 'application/json',
      traceparent: `00-${callerTrace}-${callerSpan}-01`,
    },
    body: JSON.stringify({
      connectionId: conn,
      input: { idList: t!.taskboard.demo.listIds[0], name: 'Made in a trace' },
    }),
  })
  assert.equal(res.status, 200)
  await eventually(
    async () =>
      collector!.spans.filter((s) => s.traceId === callerTrace && s.name === 'POST /1/cards').length,
    (n) => n >= 1,
  )
  const trace = collector!.spans.filter((s) => s.traceId === callerTrace)
  const request = trace.find((s) => s.name === 'POST /1/cards')!
  assert.deepEqual(chainOf(trace, request), [
    'POST /v1/steps/:stepId/run',
    'step taskboard.create_card',
    'POST /1/cards',
  ])
  const server = trace.find((s) => s.name === 'POST /v1/steps/:stepId/run')!
  assert.equal(server.parentSpanId, callerSpan)
  assert.equal(server.attributes['http.response.status_code'], 200)
  assert.ok(!JSON.stringify(trace).includes('Made in a trace'))
  assert.ok(!JSON.stringify(trace).includes(t!.taskboard.demo.token))
  await t!.close()
  t = undefined
})

test('no trace backend answering: requests go on, and the spans are dropped and counted', async () => {
  const closed = await otlpReceiver()
  await closed.close()
  const metricsToken = 'metrics-token-for-the-test'
  t = await startTestService({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: closed.url, PATCHBAY_METRICS_TOKEN: metricsToken },
  })
  const demo = t.taskboard.demo
  const conn = (
    await t.api('POST', '/v1/connections', {
      connector: 'taskboard',
      authMethod: 'api_key_token',
      credentials: { key: demo.key, token: demo.token },
    })
  ).body.id
  for (let i = 0; i < 5; i++) {
    const made: { status: number } = await t.api('POST', '/v1/steps/taskboard.create_card/run', {
      connectionId: conn,
      input: { idList: demo.listIds[0], name: `untraced ${i}` },
    })
    assert.equal(made.status, 200)
  }
  const dropped = await eventually(
    async () => {
      const res = await fetch(`${t!.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
      const text = await res.text()
      return Number(/^patchbay_trace_spans_dropped_total (\d+)/m.exec(text)?.[1] ?? 0)
    },
    (n) => n >= 10,
  )
  assert.ok(dropped >= 10)
})
