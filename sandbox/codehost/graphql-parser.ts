// A GraphQL document parser covering what clients send: operations with variables, fields with
// aliases and arguments, fragments (named and inline) and @include/@skip directives.

export interface Loc {
  line: number
  column: number
}

export type Value =
  | { kind: 'Variable'; name: string }
  | { kind: 'Int' | 'Float'; value: number }
  | { kind: 'String'; value: string }
  | { kind: 'Boolean'; value: boolean }
  | { kind: 'Null' }
  | { kind: 'Enum'; value: string }
  | { kind: 'List'; values: Value[] }
  | { kind: 'Object'; fields: Record<string, Value> }

export interface Directive {
  name: string
  args: Record<string, Value>
}

export interface FieldNode {
  kind: 'Field'
  alias: string | null
  name: string
  args: Record<string, Value>
  directives: Directive[]
  selections: Selection[] | null
  loc: Loc
}

export interface InlineFragmentNode {
  kind: 'InlineFragment'
  typeCondition: string | null
  directives: Directive[]
  selections: Selection[]
  loc: Loc
}

export interface SpreadNode {
  kind: 'FragmentSpread'
  name: string
  directives: Directive[]
  loc: Loc
}

export type Selection = FieldNode | InlineFragmentNode | SpreadNode

export interface VariableDef {
  name: string
  type: string
  defaultValue: Value | null
}

export interface OperationNode {
  operation: 'query' | 'mutation' | 'subscription'
  name: string | null
  variables: VariableDef[]
  selections: Selection[]
  loc: Loc
}

export interface FragmentNode {
  name: string
  typeCondition: string
  selections: Selection[]
  loc: Loc
}

export interface DocumentNode {
  operations: OperationNode[]
  fragments: Map<string, FragmentNode>
}

export class GraphQLSyntaxError extends Error {
  loc: Loc
  constructor(message: string, loc: Loc) {
    super(message)
    this.loc = loc
  }
}

type TokenKind = 'PUNCT' | 'NAME' | 'INT' | 'FLOAT' | 'STRING' | 'EOF'
interface Token {
  kind: TokenKind
  value: string
  loc: Loc
}

const PUNCT_NAMES: Record<string, string> = {
  '{': 'LCURLY',
  '}': 'RCURLY',
  '(': 'LPAREN',
  ')': 'RPAREN',
  '[': 'LBRACKET',
  ']': 'RBRACKET',
  ':': 'COLON',
  '!': 'BANG',
  $: 'VAR_SIGN',
  '=': 'EQUALS',
  '@': 'DIR_SIGN',
  '|': 'PIPE',
  '&': 'AMP',
  '...': 'ELLIPSIS',
}

function lex(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  const loc = (): Loc => ({ line, column: i - lineStart + 1 })
  while (i < src.length) {
    const c = src[i]
    if (c === '\n') {
      i++
      line++
      lineStart = i
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === ',' || c === '\ufeff') {
      i++
      continue
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++
      continue
    }
    const start = loc()
    if (src.startsWith('...', i)) {
      tokens.push({ kind: 'PUNCT', value: '...', loc: start })
      i += 3
      continue
    }
    if ('{}()[]:!$=@|&'.includes(c)) {
      tokens.push({ kind: 'PUNCT', value: c, loc: start })
      i++
      continue
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1
      while (j < src.length && /\w/.test(src[j])) j++
      tokens.push({ kind: 'NAME', value: src.slice(i, j), loc: start })
      i = j
      continue
    }
    if (/[-\d]/.test(c)) {
      const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i))
      if (!m)
        throw new GraphQLSyntaxError(
          `Parse error on "${c}" (error) at [${start.line}, ${start.column}]`,
          start,
        )
      tokens.push({ kind: m[2] || m[3] ? 'FLOAT' : 'INT', value: m[0], loc: start })
      i += m[0].length
      continue
    }
    if (src.startsWith('"""', i)) {
      const end = src.indexOf('"""', i + 3)
      if (end < 0)
        throw new GraphQLSyntaxError(
          `Parse error on unterminated string at [${start.line}, ${start.column}]`,
          start,
        )
      const raw = src.slice(i + 3, end)
      tokens.push({ kind: 'STRING', value: blockString(raw), loc: start })
      for (const ch of raw) if (ch === '\n') line++
      const lastNl = raw.lastIndexOf('\n')
      if (lastNl >= 0) lineStart = i + 3 + lastNl + 1
      i = end + 3
      continue
    }
    if (c === '"') {
      let j = i + 1
      let out = ''
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\n')
          throw new GraphQLSyntaxError(
            `Parse error on unterminated string at [${start.line}, ${start.column}]`,
            start,
          )
        if (src[j] === '\\') {
          const e = src[j + 1]
          const map: Record<string, string> = {
            n: '\n',
            t: '\t',
            r: '\r',
            b: '\b',
            f: '\f',
            '"': '"',
            '\\': '\\',
            '/': '/',
          }
          if (e === 'u') {
            out += String.fromCharCode(Number.parseInt(src.slice(j + 2, j + 6), 16))
            j += 6
          } else {
            out += map[e] ?? e
            j += 2
          }
          continue
        }
        out += src[j]
        j++
      }
      if (j >= src.length)
        throw new GraphQLSyntaxError(
          `Parse error on unterminated string at [${start.line}, ${start.column}]`,
          start,
        )
      tokens.push({ kind: 'STRING', value: out, loc: start })
      i = j + 1
      continue
    }
    throw new GraphQLSyntaxError(`Parse error on "${c}" (error) at [${start.line}, ${start.column}]`, start)
  }
  tokens.push({ kind: 'EOF', value: '', loc: loc() })
  return tokens
}

function blockString(raw: string): string {
  const lines = raw.split('\n')
  const indents = lines
    .slice(1)
    .filter((l) => l.trim())
    .map((l) => l.length - l.trimStart().length)
  const common = indents.length ? Math.min(...indents) : 0
  const out = [lines[0], ...lines.slice(1).map((l) => l.slice(common))]
  while (out.length && !out[0].trim()) out.shift()
  while (out.length && !out[out.length - 1].trim()) out.pop()
  return out.join('\n')
}

class Parser {
  #t: Token[]
  #i = 0

  constructor(src: string) {
    this.#t = lex(src)
  }

  get #peek(): Token {
    return this.#t[this.#i]
  }

  #fail(tok: Token): never {
    const label =
      tok.kind === 'EOF'
        ? 'end of query'
        : `"${tok.value}" (${tok.kind === 'PUNCT' ? PUNCT_NAMES[tok.value] : tok.kind === 'NAME' ? 'IDENTIFIER' : tok.kind})`
    throw new GraphQLSyntaxError(`Parse error on ${label} at [${tok.loc.line}, ${tok.loc.column}]`, tok.loc)
  }

  #atEnd(): boolean {
    return this.#peek.kind === 'EOF'
  }

  #is(value: string): boolean {
    return this.#peek.kind === 'PUNCT' && this.#peek.value === value
  }

  #expect(value: string): Token {
    const tok = this.#peek
    if (tok.kind !== 'PUNCT' || tok.value !== value) this.#fail(tok)
    this.#i++
    return tok
  }

  #name(): string {
    const tok = this.#peek
    if (tok.kind !== 'NAME') this.#fail(tok)
    this.#i++
    return tok.value
  }

  document(): DocumentNode {
    const doc: DocumentNode = { operations: [], fragments: new Map() }
    if (this.#atEnd()) this.#fail(this.#peek)
    while (!this.#atEnd()) {
      const tok = this.#peek
      if (this.#is('{'))
        doc.operations.push({
          operation: 'query',
          name: null,
          variables: [],
          selections: this.#selectionSet(),
          loc: tok.loc,
        })
      else if (
        tok.kind === 'NAME' &&
        (tok.value === 'query' || tok.value === 'mutation' || tok.value === 'subscription')
      ) {
        this.#i++
        const name = this.#peek.kind === 'NAME' ? this.#name() : null
        const variables = this.#is('(') ? this.#variableDefs() : []
        this.#directives()
        doc.operations.push({
          operation: tok.value as OperationNode['operation'],
          name,
          variables,
          selections: this.#selectionSet(),
          loc: tok.loc,
        })
      } else if (tok.kind === 'NAME' && tok.value === 'fragment') {
        this.#i++
        const name = this.#name()
        if (this.#name() !== 'on') this.#fail(this.#t[this.#i - 1])
        const typeCondition = this.#name()
        this.#directives()
        doc.fragments.set(name, { name, typeCondition, selections: this.#selectionSet(), loc: tok.loc })
      } else this.#fail(tok)
    }
    return doc
  }

  #variableDefs(): VariableDef[] {
    this.#expect('(')
    const defs: VariableDef[] = []
    while (!this.#is(')')) {
      this.#expect('$')
      const name = this.#name()
      this.#expect(':')
      const type = this.#type()
      let defaultValue: Value | null = null
      if (this.#is('=')) {
        this.#expect('=')
        defaultValue = this.#value(true)
      }
      defs.push({ name, type, defaultValue })
    }
    this.#expect(')')
    return defs
  }

  #type(): string {
    let t: string
    if (this.#is('[')) {
      this.#expect('[')
      t = `[${this.#type()}]`
      this.#expect(']')
    } else t = this.#name()
    if (this.#is('!')) {
      this.#expect('!')
      t += '!'
    }
    return t
  }

  #directives(): Directive[] {
    const out: Directive[] = []
    while (this.#is('@')) {
      this.#expect('@')
      const name = this.#name()
      out.push({ name, args: this.#is('(') ? this.#args() : {} })
    }
    return out
  }

  #selectionSet(): Selection[] {
    this.#expect('{')
    const out: Selection[] = []
    while (!this.#is('}')) out.push(this.#selection())
    this.#expect('}')
    if (out.length === 0) this.#fail(this.#t[this.#i - 1])
    return out
  }

  #selection(): Selection {
    const tok = this.#peek
    if (this.#is('...')) {
      this.#i++
      if (this.#peek.kind === 'NAME' && this.#peek.value !== 'on') {
        const name = this.#name()
        return { kind: 'FragmentSpread', name, directives: this.#directives(), loc: tok.loc }
      }
      let typeCondition: string | null = null
      if (this.#peek.kind === 'NAME' && this.#peek.value === 'on') {
        this.#i++
        typeCondition = this.#name()
      }
      const directives = this.#directives()
      return {
        kind: 'InlineFragment',
        typeCondition,
        directives,
        selections: this.#selectionSet(),
        loc: tok.loc,
      }
    }
    let name = this.#name()
    let alias: string | null = null
    if (this.#is(':')) {
      this.#expect(':')
      alias = name
      name = this.#name()
    }
    const args = this.#is('(') ? this.#args() : {}
    const directives = this.#directives()
    const selections = this.#is('{') ? this.#selectionSet() : null
    return { kind: 'Field', alias, name, args, directives, selections, loc: tok.loc }
  }

  #args(): Record<string, Value> {
    this.#expect('(')
    const out: Record<string, Value> = {}
    while (!this.#is(')')) {
      const name = this.#name()
      this.#expect(':')
      out[name] = this.#value(false)
    }
    this.#expect(')')
    return out
  }

  #value(constant: boolean): Value {
    const tok = this.#peek
    if (this.#is('$') && !constant) {
      this.#i++
      return { kind: 'Variable', name: this.#name() }
    }
    if (this.#is('[')) {
      this.#i++
      const values: Value[] = []
      while (!this.#is(']')) values.push(this.#value(constant))
      this.#expect(']')
      return { kind: 'List', values }
    }
    if (this.#is('{')) {
      this.#i++
      const fields: Record<string, Value> = {}
      while (!this.#is('}')) {
        const name = this.#name()
        this.#expect(':')
        fields[name] = this.#value(constant)
      }
      this.#expect('}')
      return { kind: 'Object', fields }
    }
    this.#i++
    switch (tok.kind) {
      case 'INT':
        return { kind: 'Int', value: Number(tok.value) }
      case 'FLOAT':
        return { kind: 'Float', value: Number(tok.value) }
      case 'STRING':
        return { kind: 'String', value: tok.value }
      case 'NAME':
        if (tok.value === 'true' || tok.value === 'false')
          return { kind: 'Boolean', value: tok.value === 'true' }
        if (tok.value === 'null') return { kind: 'Null' }
        return { kind: 'Enum', value: tok.value }
      default:
        this.#i--
        this.#fail(tok)
    }
  }
}

export function parse(src: string): DocumentNode {
  return new Parser(src).document()
}
