// `patchbay mcp --agent <id>`: MCP over stdio for clients that start their servers as commands.
// It embeds nothing: each JSON-RPC message is passed unchanged to a running Patchbay's /mcp
// (Streamable HTTP) with the key, and each answer back — so stdio and HTTP clients see the very
// same server, scope checks and errors. stdout carries the protocol only; notes go to stderr.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export async function serveMcpOverStdio(opts: {
  url: string
  key: string
  agentId: string
}): Promise<number> {
  const endpoint = new URL(`${opts.url}/mcp`)
  endpoint.searchParams.set('agent', opts.agentId)
  const upstream = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { authorization: `Bearer ${opts.key}` } },
  })
  const local = new StdioServerTransport()
  const log = (line: string) => process.stderr.write(`patchbay mcp: ${line}\n`)

  local.onmessage = (message: JSONRPCMessage) => {
    upstream.send(message).catch((err: Error) => {
      log(err.message)
      // A request that could not be passed on still gets its answer, so the client does not hang.
      if (isJSONRPCRequest(message))
        local
          .send({
            jsonrpc: '2.0',
            id: message.id,
            error: {
              code: -32000,
              message: `Patchbay (${opts.url}) refused or could not be reached: ${err.message}`,
            },
          })
          .catch(() => {})
    })
  }
  upstream.onmessage = (message: JSONRPCMessage) => {
    // The negotiated version goes on every later HTTP request, as the MCP client would send it.
    const result = (message as { result?: { protocolVersion?: unknown } }).result
    if (typeof result?.protocolVersion === 'string') upstream.setProtocolVersion(result.protocolVersion)
    local.send(message).catch((err: Error) => log(err.message))
  }
  upstream.onerror = (err) => log(err.message)
  local.onerror = (err) => log(err.message)

  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve()
    process.stdin.on('end', () => resolve())
  })
  await upstream.start()
  await local.start()
  log(`serving agent ${opts.agentId} from ${opts.url}/mcp on stdio`)
  await closed
  await upstream.close().catch(() => {})
  return 0
}
