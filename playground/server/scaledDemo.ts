/**
 * The demo server in scaled mode: the same DemoServer (one shared store, the legacy endpoint,
 * the clock), with its 2026-07-28 side replaced by a ScaledCluster. Loaded only in scaled mode,
 * so the default playground never imports Redis.
 */
import { type Logger, type ScaleConfig, ScaledCluster } from './cluster';
import { handleControl } from './controlApi';
import { DemoServer } from './demoServer';
import { DemoStore } from './tools';

export interface ScaledDemo {
  demo: DemoServer;
  cluster: ScaledCluster;
}

export async function startScaledDemo(config: ScaleConfig, logger: Logger): Promise<ScaledDemo> {
  const store = new DemoStore();
  // The instances serve control requests for the demo built right after them.
  let demo: DemoServer | undefined;
  const cluster = await ScaledCluster.start({
    store,
    config,
    logger,
    control: (instance, req, res) => {
      if (!demo) throw new Error('the demo is not ready');
      return handleControl(demo, req, res, {
        name: instance.name,
        via: instance.publisher,
        handled: (what) => cluster.changeHandled(instance, what),
      });
    },
  });
  demo = new DemoServer({ store, modern: () => cluster });
  return { demo, cluster };
}
