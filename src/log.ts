/**
 * A small leveled logger writing one line per event to stderr: text for people, or one JSON object
 * per line (`[log] format = "json"`) for log collectors.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'
export type LogFormat = 'text' | 'json'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

export interface Logger {
  debug(message: string, detail?: unknown): void
  info(message: string, detail?: unknown): void
  warn(message: string, detail?: unknown): void
  error(message: string, detail?: unknown): void
  child(component: string): Logger
}

export interface LoggerOptions {
  level: LogLevel
  /** 'text' (the default): `<time> <LEVEL> [module] message`; 'json': {time, level, module, msg, fields?, stack?} */
  format?: LogFormat
  /** where lines go; stderr by default */
  write?: (line: string) => void
}

export function createLogger(options: LoggerOptions, component = 'keel'): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`))
  const threshold = RANK[options.level]
  const emit = (level: LogLevel, message: string, detail?: unknown): void => {
    if (RANK[level] < threshold) return
    const time = new Date().toISOString()
    if (options.format === 'json') {
      const record: Record<string, unknown> = { time, level, module: component, msg: message }
      if (detail instanceof Error) record.stack = detail.stack ?? detail.message
      else if (detail !== undefined) record.fields = detail
      write(safeText(record))
      return
    }
    let line = `${time} ${level.toUpperCase().padEnd(5)} [${component}] ${message}`
    if (detail instanceof Error) line += `\n${detail.stack ?? detail.message}`
    else if (detail !== undefined) line += ` ${safeText(detail)}`
    write(line)
  }
  return {
    debug: (message, detail) => emit('debug', message, detail),
    info: (message, detail) => emit('info', message, detail),
    warn: (message, detail) => emit('warn', message, detail),
    error: (message, detail) => emit('error', message, detail),
    child: (name) => createLogger(options, `${component}:${name}`),
  }
}

function safeText(detail: unknown): string {
  try {
    return JSON.stringify(detail, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))
  } catch {
    return String(detail)
  }
}
