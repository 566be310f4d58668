// Task-board errors are plain-text bodies (the classic API answers `invalid key`, `invalid id` and
// so on as text/plain). Thrown ApiErrors reach the common shell's error handler, which calls
// sendError with the status and message kept here.
import type { FastifyReply } from 'fastify'

export class ApiError extends Error {
  statusCode: number
  constructor(statusCode: number, message: string) {
    super(message)
    this.statusCode = statusCode
  }
}

export const NOT_FOUND_TEXT = 'The requested resource was not found.'

export const invalidKey = () => new ApiError(401, 'invalid key')
export const invalidToken = () => new ApiError(401, 'invalid token')
export const unauthorized = () => new ApiError(401, 'unauthorized permission requested')
export const invalidId = () => new ApiError(400, 'invalid id')
export const notFound = () => new ApiError(404, NOT_FOUND_TEXT)
export const invalidValue = (field: string) => new ApiError(400, `invalid value for ${field}`)

export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  // Limit errors are the one JSON-bodied kind; they travel through the shell's error handler as
  // their serialized body.
  if (message.startsWith('{"error"'))
    return reply.code(status).type('application/json; charset=utf-8').send(message)
  return reply.code(status).type('text/plain; charset=utf-8').send(message)
}
