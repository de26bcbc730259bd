import type { AccountsRepo, DomainsRepo, InboundRoutesRepo } from '../db/index.js';
import type { InboundRecipient, InboundRouteRow } from '../domain/entities/inbound.js';
import { isWithin, readRouteMatch, recipientParts } from '../domain/inbound-addresses.js';
import { toPage } from '../domain/pagination.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';

export interface InboundRoutesDeps {
  routes: InboundRoutesRepo;
  domains: Pick<DomainsRepo, 'listByAccount'>;
  accounts: Pick<AccountsRepo, 'get'>;
}

/**
 * An account's inbound routes (CONTRACT.md "Inbound mail"): the addresses of its verified domains (or their
 * subdomains) that it receives mail at, and the one question the inbound listener asks of them, whose route
 * an address is. The caller has authenticated the account and checked the key's permission; an operator's
 * call names the account, which assertAccount checks exists.
 */
export function createInboundRoutesService(deps: InboundRoutesDeps) {
  const { routes } = deps;

  return {
    /** 404 unless the account exists: an operator's call names one (an API key's is its own). */
    async assertAccount(accountId: string): Promise<void> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
    },

    /**
     * A new route for `match` (`local@domain` or `*@domain`) on a verified domain of the account or a subdomain
     * of one; 400 otherwise, 409 when any account has the match already. A domain that is another account's
     * is refused exactly as one that is nobody's, so the answer tells nothing of other accounts' domains.
     */
    async create(accountId: string, match: string): Promise<InboundRouteRow> {
      const read = readRouteMatch(match);
      if ('problem' in read) throw invalid(`match: ${read.problem}`);
      // The most specific verified domain the match is within: a subdomain added as a domain of its own wins.
      const owner = (await deps.domains.listByAccount(accountId))
        .filter((d) => d.verifiedAt !== null && isWithin(read.domain, d.name))
        .sort((a, b) => b.name.length - a.name.length)[0];
      if (!owner)
        throw invalid(
          `match: ${read.domain} is not a verified domain of this account or a subdomain of one: add the domain and verify it first`,
        );
      return routes.create({ id: newId('inboundRoute'), accountId, domainId: owner.id, ...read });
    },

    /** One page of the account's routes, newest first, with how many it has. */
    async list(accountId: string, q: { page: number; pageSize: number }) {
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      return routes.page(accountId, limit, offset);
    },

    /** Deletes a route of the account (another account's is a 404); mail it received stays. */
    async delete(accountId: string, id: string): Promise<void> {
      if (!(await routes.delete(accountId, id))) throw notFound('inbound route', id);
    },

    /** The operator's delete: any account's route, by id. */
    async deleteAny(id: string): Promise<void> {
      if (!(await routes.delete(undefined, id))) throw notFound('inbound route', id);
    },

    /**
     * Whose an RCPT TO address is: `local+hash@domain` is `local@domain`'s route with mailbox hash `hash`, an
     * exact route before the domain's `*@domain`, without regard to case. Undefined for an address no route
     * takes, and for one that is malformed or over 320 characters (it comes from anyone on the internet).
     */
    async resolve(address: string): Promise<InboundRecipient | undefined> {
      const parts = recipientParts(address);
      if (!parts) return undefined;
      const route = await routes.find(parts.domain, parts.localPart);
      return route && { route, mailboxHash: parts.mailboxHash };
    },
  };
}
export type InboundRoutesService = ReturnType<typeof createInboundRoutesService>;
