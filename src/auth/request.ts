/**
 * The permissions of one request (docs/permissions.md "How effective permissions
 * are computed"): the endpoint's scope, `default`, the roles an endpoint runs as (`👤: {as}`), the
 * roles of the signed-in user's top-level profiles, and, per record, the roles of the user's
 * profiles in the record's container.
 *
 * Roles are read from the store when first needed and kept for the request: one query per
 * top-level profile model, and one per contained profile model and container met. The source
 * answers synchronously on SQLite; on PostgreSQL it answers Promises, so the data layer calls
 * `prepare` (which may wait) before the synchronous `can` needs them.
 */
import type { Operation } from './config.js';
import type { Permissions, PermissionScope, PermissionTarget } from './permissions.js';

/** A container a record belongs to, as `Model:id` (a Project's own id for a Project, the Project's id for its ProjectVersion). */
export type ContainerKey = string;

/** Where the roles of a user's profiles come from (the data layer, in the request's session). */
export interface ProfileRoles {
  /** The roles on the user's top-level profiles. */
  top(user: string): string[] | Promise<string[]>;
  /** The roles on the user's profiles inside one container (`Model:id`). */
  inContainer(user: string, container: ContainerKey): string[] | Promise<string[]>;
}

const NONE: readonly string[] = Object.freeze([]);

export class RequestPermissions {
  /** The roles of the user's top-level profiles (undefined: not read yet). */
  #profiles: readonly string[] | undefined;
  /** `as` and the top-level profiles' roles: what applies to every record. */
  #top: readonly string[] | undefined;
  readonly #containers = new Map<ContainerKey, readonly string[]>();

  constructor(
    readonly scope: PermissionScope,
    /** The signed-in user's id, or null for a visitor (who holds `default` and `as` roles only). */
    readonly user: string | null,
    /** Roles the endpoint runs as (`👤: {as: …}`). */
    readonly as: readonly string[],
    /** Replaced by the data layer once the request has its own session (a profile it writes then counts). */
    public source: ProfileRoles,
  ) {
    if (user === null) this.#loaded(NONE);
  }

  #loaded(profiles: readonly string[]): void {
    this.#profiles = profiles;
    this.#top = this.as.length ? [...this.as, ...profiles] : profiles;
    this.#topPermissions = undefined;
  }

  /** The permissions of default and `as`, and of those with the top-level profiles' roles (made on first use). */
  #asPermissions: Permissions | undefined;
  #topPermissions: Permissions | undefined;

  /** Loads the roles `can` needs for these containers (a Promise only when the source waits). */
  prepare(containers: readonly ContainerKey[] = NONE): void | Promise<void> {
    const waits: Promise<void>[] = [];
    const user = this.user;
    if (this.#top === undefined && user !== null) {
      const r = this.source.top(user);
      if (r instanceof Promise) waits.push(r.then((roles) => this.#loaded(roles)));
      else this.#loaded(r);
    }
    if (user !== null) {
      for (const c of containers) {
        if (this.#containers.has(c)) continue;
        const r = this.source.inContainer(user, c);
        if (r instanceof Promise) waits.push(r.then((roles) => void this.#containers.set(c, roles)));
        else this.#containers.set(c, r);
      }
    }
    if (waits.length) return Promise.all(waits).then(() => undefined);
  }

  /**
   * Whether `op` on `target` is allowed, for a record in `containers` (none: top-level roles
   * only). Roles not loaded yet are loaded now when the source answers at once; otherwise
   * `prepare` must have run (an Error says so).
   */
  can(op: Operation, target: PermissionTarget, containers: readonly ContainerKey[] = NONE): boolean {
    // What default (and `as`) allows needs no profile read.
    if (this.#top === undefined && (this.#asPermissions ??= this.scope.for({ top: this.as })).can(op, target)) return true;
    if (this.#top === undefined || (this.user !== null && containers.some((c) => !this.#containers.has(c)))) {
      if (this.prepare(containers) instanceof Promise) throw new Error('the roles of this request were not loaded before a permission check');
    }
    const top = this.#top ?? NONE;
    // Default and the top-level roles first: most checks end here, with one cached Permissions.
    if ((this.#topPermissions ??= this.scope.for({ top })).can(op, target)) return true;
    if (this.user === null || containers.length === 0) return false;
    let inContainer: string[] | undefined;
    for (const c of containers) {
      const roles = this.#containers.get(c);
      if (roles && roles.length) (inContainer ??= []).push(...roles);
    }
    return inContainer !== undefined && this.scope.for({ top, inContainer }).can(op, target);
  }

  /** Whether the visitor holds one of `roles` on a profile (top-level, or in one of `containers`): `👤: {only}` (roles run `as` do not count). */
  holds(roles: readonly string[], containers: readonly ContainerKey[] = NONE): boolean {
    if (this.#top === undefined || containers.some((c) => !this.#containers.has(c))) {
      if (this.prepare(containers) instanceof Promise) throw new Error('the roles of this request were not loaded before a role check');
    }
    const held = new Set([...(this.#profiles ?? NONE), ...containers.flatMap((c) => this.#containers.get(c) ?? NONE)]);
    return roles.some((r) => held.has(r));
  }

  /** Forgets the loaded roles (a profile was written in this request: its roles are read again). */
  forget(): void {
    if (this.user !== null) {
      this.#profiles = undefined;
      this.#top = undefined;
      this.#topPermissions = undefined;
    }
    this.#containers.clear();
  }
}
