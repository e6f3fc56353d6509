// "Connect an agent" (Agents screen): the one command that starts the reference agent,
// its environment given inline, so that it works when pasted into any shell that has
// the agentdesk binary: no export, no config file, no second step.
import type { EnvVar } from './types';

/** Quotes v for a POSIX shell when it holds anything but safe characters. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9_./:@-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** The variables agent run reads (agentrun.ConfigFromEnv); the name goes as --name. */
const RUN_VARS = ['AGENTDESK_URL', 'SERVICE_PROJECT_ID', 'SERVICE_API_TOKEN', 'SERVICE_NAMESPACE', 'AGENTDESK_VECTOR_SPACES'];

/**
 * The command line: VAR=value ... agentdesk agent run --name NAME. shown, if given,
 * replaces a value as displayed (masked secrets); the copied line uses the real ones.
 */
export function runCommand(env: EnvVar[], name: string, shown?: (v: EnvVar) => string): string {
  const vars = RUN_VARS.flatMap((n) => env.filter((v) => v.name === n && v.value !== ''));
  return [...vars.map((v) => `${v.name}=${shown ? shown(v) : shellQuote(v.value)}`), 'agentdesk agent run --name', shellQuote(name)].join(' ');
}
