// Team mode's state logic, kept out of the screens so that it is tested on its own:
// who the header names, which roles a member may hand out, how sessions are listed.
import type { Session, Membership } from './api';
import type { BrowserSession, Role } from './types';

export const ROLES: Role[] = ['owner', 'admin', 'member', 'viewer'];

/** What the header calls the signed-in caller: the person, the desktop's owner, or the token's name. */
export function whoLabel(s: Session): string {
  if (s.cookie && s.user) return s.user.name || s.user.email;
  if (s.desktop || s.viewer.kind === 'owner') return 'Owner';
  return s.viewer.name;
}

/** The projects to switch between: shown only when the person has several, by name. */
export function switchableProjects(s: Session | null): Membership[] {
  const ms = s?.cookie ? (s.memberships ?? []) : [];
  if (ms.length < 2) return [];
  return [...ms].sort((a, b) => a.projectName.localeCompare(b.projectName) || a.projectId.localeCompare(b.projectId));
}

/** The caller's role in the project it acts in, when it is a person. */
export function myRole(s: Session | null): Role | null {
  const m = s?.memberships?.find((m) => m.projectId === s.viewer.projectId);
  return (m?.role as Role | undefined) ?? null;
}

/** The roles the caller may give: only an owner (a person who is one, or the local owner) makes or unmakes owners. */
export function grantableRoles(s: Session | null): Role[] {
  if (!s) return [];
  const owner = s.cookie ? myRole(s) === 'owner' : s.viewer.kind === 'owner';
  return owner ? ROLES : ROLES.filter((r) => r !== 'owner');
}

/** Whether the caller may change or remove a member of this role (the server decides in the end). */
export function mayManage(s: Session | null, role: Role): boolean {
  return grantableRoles(s).includes(role);
}

/** This browser first, then the most recently used. */
export function sortSessions(list: BrowserSession[]): BrowserSession[] {
  return [...list].sort((a, b) => Number(b.current) - Number(a.current) || b.lastSeenAt.localeCompare(a.lastSeenAt));
}

/** "Firefox on Linux" from a User-Agent header; the header itself when nothing matches. */
export function describeAgent(ua: string): string {
  if (!ua) return 'Unknown browser';
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /Firefox\//.test(ua)
      ? 'Firefox'
      : /(Chrome|Chromium)\//.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : '';
  const os = /Windows/.test(ua)
    ? 'Windows'
    : /Android/.test(ua)
      ? 'Android'
      : /iPhone|iPad/.test(ua)
        ? 'iOS'
        : /Mac OS X|Macintosh/.test(ua)
          ? 'macOS'
          : /Linux|X11/.test(ua)
            ? 'Linux'
            : '';
  if (!browser) return ua.length > 60 ? ua.slice(0, 57) + '…' : ua;
  return os ? `${browser} on ${os}` : browser;
}
