/**
 * Application Plan List (porta's `Admin::Api::ApplicationPlansController#index`), for all the provider's
 * services or one: every plan, published or hidden, with `state`, `approval_required` and `default`.
 */
import type { AdminContext } from './admin-context';
import { AdminApiError } from './admin-errors';
import { plansAnswerXml } from './admin-xml';
import type { Answer } from './transactor';

export function listPlans(context: AdminContext, [, serviceId]: readonly string[]): Answer {
  const services =
    serviceId === undefined
      ? context.services
      : context.services.filter((service) => service.id === serviceId);
  if (services.length === 0) throw AdminApiError.notFound();
  const plans = services.flatMap((service) =>
    [...service.planInfo.values()].map((plan) => ({ service, plan })),
  );
  return { status: 200, headers: {}, body: plansAnswerXml(plans) };
}
