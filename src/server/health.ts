import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";

/** grpc.health.v1.Health: SERVING while the database is ready, for "" and for every served service. */
export function registerHealth(
  router: ConnectRouter,
  services: readonly DescService[],
  ready: () => Promise<boolean>,
): void {
  const known = new Set(["", ...services.map((s) => s.typeName)]);
  const statusOf = async (service: string): Promise<Status> => {
    if (!known.has(service)) throw new ConnectError(`unknown service ${service}`, Code.NotFound);
    return (await ready().catch(() => false)) ? Status.SERVING : Status.NOT_SERVING;
  };
  router.service(Health, {
    async check(req) {
      return { status: await statusOf(req.service) };
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const status = known.has(req.service) ? await statusOf(req.service) : Status.SERVICE_UNKNOWN;
        if (status !== last) yield { status };
        last = status;
        await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
      }
    },
  });
}
