import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { separateTrackingHost } from '../../src/http/tracking-host.js';
import { loadCompose, loadYaml, repoRoot, type ComposeProject, type ComposeService } from '../helpers/compose-check.js';
import { children, only, parseNginxConf, type Directive } from '../helpers/nginx-conf.js';

/**
 * deploy/: the proxy (nginx), Prometheus and Grafana configurations, against docker-compose.yml as compose
 * loads it. Each names compose services and ports; these tests keep the names and ports in step.
 */
const ENV = {
  POSTGRES_PASSWORD: 'p',
  TEMPORAL_DB_PASSWORD: 't',
  MAILER_ADMIN_TOKEN: 'a'.repeat(40),
  MAILER_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
};

let services: Record<string, ComposeService>;
let project: ComposeProject & { networks?: unknown };
beforeAll(() => {
  const loaded = loadCompose(ENV, ['observability']);
  expect(loaded.stderr).toBe('');
  project = loaded.project;
  services = loaded.project.services;
}, 300_000);

const settingsOf = (name: string) => loadConfig(services[name]!.environment as Record<string, string>);
/** The repository file bind-mounted at `target` in `service`. */
function mountedFile(service: string, target: string): string {
  const mount = (services[service]!.volumes ?? []).find((v) => v.type === 'bind' && v.target === target);
  expect(mount, `${service} mounts ${target}`).toBeDefined();
  return path.relative(repoRoot, mount!.source);
}

describe('deploy/nginx/nginx.conf', () => {
  let conf: Directive[];
  beforeAll(() => {
    conf = parseNginxConf(fs.readFileSync(path.join(repoRoot, mountedFile('proxy', '/etc/nginx/nginx.conf')), 'utf8'));
  });

  /** upstream name -> its `server host:port` entries, in http and stream. */
  const upstreams = () => {
    const out = new Map<string, { host: string; port: number; args: string[] }[]>();
    for (const ctx of ['http', 'stream']) {
      for (const u of children(only(conf, ctx).block, 'upstream')) {
        out.set(
          u.args[0]!,
          children(u.block, 'server').map((s) => {
            const [host, port] = s.args[0]!.split(':');
            return { host: host!, port: Number(port), args: s.args.slice(1) };
          }),
        );
      }
    }
    return out;
  };
  /** listen port -> the upstream its server block passes to. */
  const listeners = () => {
    const out = new Map<number, string>();
    for (const server of children(only(conf, 'stream').block, 'server')) {
      out.set(Number(only(server.block, 'listen').args[0]), only(server.block, 'proxy_pass').args[0]!);
    }
    for (const server of children(only(conf, 'http').block, 'server')) {
      const root = children(server.block, 'location').find((l) => l.args.join(' ') === '/');
      out.set(
        Number(only(server.block, 'listen').args[0]),
        only(root!.block, 'proxy_pass').args[0]!.replace('http://', ''),
      );
    }
    return out;
  };

  it('sends each published port of the proxy to the API replicas port of the same listener', () => {
    const api = settingsOf('api');
    const expected = new Map([
      [8080, api.port],
      [8081, api.grpcPort],
      [2526, api.inboundPort],
      [2587, api.submissionPort],
    ]);
    const published = (services.proxy!.ports ?? []).map((p) => p.target).sort();
    expect([...listeners().keys()].sort()).toEqual(published);
    expect(published).toEqual([...expected.keys()].sort());
    const ups = upstreams();
    for (const [listen, upstream] of listeners()) {
      const servers = ups.get(upstream);
      expect(servers, `upstream ${upstream}`).toBeDefined();
      // The compose service name, which Docker's DNS answers with every replica's address.
      expect(servers!.map((s) => `${s.host}:${s.port}`)).toEqual([`api:${expected.get(listen)}`]);
      expect((services.api!.expose ?? []).map(Number)).toContain(expected.get(listen));
    }
  });

  it('names only compose services, re-resolved through Docker DNS so replicas come and go', () => {
    const ups = upstreams();
    expect(ups.size).toBe(4);
    for (const [name, servers] of ups) {
      for (const s of servers) {
        expect(Object.keys(services), `${name}: ${s.host}`).toContain(s.host);
        expect(s.args, name).toContain('resolve');
      }
    }
    for (const ctx of ['http', 'stream']) {
      expect(only(only(conf, ctx).block, 'resolver').args[0]).toBe('127.0.0.11');
      for (const u of children(only(conf, ctx).block, 'upstream'))
        expect(children(u.block, 'zone').length, u.args[0]).toBe(1);
    }
  });

  it('never forwards /metrics, and lets the largest request the API takes through', () => {
    const server = only(only(conf, 'http').block, 'server');
    const metrics = children(server.block, 'location').find((l) => l.args.join(' ') === '= /metrics');
    expect(only(metrics?.block, 'return').args).toEqual(['404']);
    expect(only(server.block, 'client_max_body_size').args).toEqual(['64m']);
  });

  it('is what the proxy health check probes through', () => {
    expect(services.proxy!.healthcheck!.test!.join(' ')).toContain(`http://127.0.0.1:8080/healthz`);
  });

  it('is the one peer whose X-Forwarded-For the API believes: a fixed address on a network it shares with the API replicas alone', () => {
    // What compose-go normalises: each service's networks, and the networks' address plans.
    const networksOf = (name: string) =>
      (services[name] as { networks?: Record<string, { ipv4_address?: string } | null> }).networks ?? { default: null };
    const proxyNetworks = networksOf('proxy');
    expect(Object.keys(proxyNetworks)).toEqual(['edge']);
    const address = proxyNetworks.edge!.ipv4_address!;
    expect(settingsOf('api').trustedProxies).toEqual([address]);
    // Workers build no REST request: they trust nobody.
    expect(settingsOf('worker').trustedProxies).toEqual([]);
    const onEdge = Object.keys(services)
      .filter((name) => 'edge' in networksOf(name))
      .sort();
    expect(onEdge).toEqual(['api', 'proxy']);
    // Inside the subnet, outside the range replicas take their addresses from: no replica can hold it.
    const [plan] = (project.networks as Record<string, { ipam: { config: { subnet: string; ip_range: string }[] } }>)
      .edge!.ipam.config;
    expect(inCidr(address, plan!.subnet)).toBe(true);
    expect(inCidr(address, plan!.ip_range)).toBe(false);
    expect(inCidr(plan!.ip_range.split('/')[0]!, plan!.subnet)).toBe(true);

    // nginx appends the peer it saw to whatever X-Forwarded-For came in (the API reads the rightmost
    // untrusted entry, so what a client wrote itself is never taken), and passes the Host the client asked
    // for (the tracking host is told apart by it).
    const root = children(only(only(conf, 'http').block, 'server').block, 'location').find(
      (l) => l.args.join(' ') === '/',
    );
    const headers = new Map(
      children(root!.block, 'proxy_set_header').map((d) => [d.args[0]!.toLowerCase(), d.args[1]]),
    );
    expect(headers.get('x-forwarded-for')).toBe('$proxy_add_x_forwarded_for');
    expect(headers.get('host')).toBe('$host');
  });

  it('names each SMTP client in a PROXY protocol header, which the API believes from the proxy alone', () => {
    // Else every client of the SMTP listeners would have the proxy's address, and share its per-address cap.
    const address = (services.proxy as { networks?: Record<string, { ipv4_address?: string }> }).networks!.edge!
      .ipv4_address!;
    const smtpPorts = [settingsOf('api').inboundPort, settingsOf('api').submissionPort];
    for (const server of children(only(conf, 'stream').block, 'server')) {
      const port = Number(only(server.block, 'listen').args[0]);
      expect(
        children(server.block, 'proxy_protocol').map((d) => d.args),
        `listen ${port}`,
      ).toEqual(smtpPorts.includes(port) ? [['on']] : []);
    }
    expect(settingsOf('api').smtpProxyProtocolFrom).toEqual([address]);
    expect(settingsOf('worker').smtpProxyProtocolFrom).toEqual([]);
  });
});

describe('MAILER_TRACKING_URL in docker-compose.yml', () => {
  it("has mail link to a host name of its own, apart from the console's, through the proxy's REST port, in both roles", () => {
    const restPort = (services.proxy!.ports ?? []).find((p) => p.target === 8080)!.published;
    for (const role of ['api', 'worker']) {
      const c = settingsOf(role);
      expect(separateTrackingHost(c.publicUrl, c.trackingUrl), role).toBe('track.localhost');
      expect(new URL(c.trackingUrl).port).toBe(restPort);
    }
  });
});

/** Whether an IPv4 address is inside an IPv4 CIDR range. */
function inCidr(address: string, cidr: string): boolean {
  const toInt = (a: string) => a.split('.').reduce((n, part) => n * 256 + Number(part), 0);
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(address) / size) === Math.floor(toInt(base!) / size);
}

describe('deploy/prometheus/prometheus.yml', () => {
  interface Job {
    job_name: string;
    metrics_path?: string;
    authorization?: { type: string; credentials_file: string };
    dns_sd_configs?: { names: string[]; type: string; port: number }[];
  }
  let jobs: Job[];
  beforeAll(() => {
    const file = mountedFile('prometheus', '/etc/prometheus/prometheus.yml');
    jobs = (loadYaml(file) as { scrape_configs: Job[] }).scrape_configs;
  });

  it('scrapes every API and worker replica on its metrics port, found by compose service name', () => {
    const api = settingsOf('api');
    const worker = settingsOf('worker');
    const targets = jobs
      .filter((j) => j.dns_sd_configs)
      .map((j) => ({ job: j.job_name, path: j.metrics_path, sd: j.dns_sd_configs }));
    expect(targets).toEqual([
      {
        job: 'mailer-api',
        path: '/metrics',
        sd: [expect.objectContaining({ names: ['api'], type: 'A', port: api.port })],
      },
      {
        job: 'mailer-worker',
        path: '/metrics',
        sd: [expect.objectContaining({ names: ['worker'], type: 'A', port: worker.workerPort })],
      },
    ]);
    for (const t of targets) expect(services[t.sd![0]!.names[0]!]!.deploy?.replicas).toBe(2);
  });

  it('sends the metrics token that compose writes from MAILER_METRICS_TOKEN', () => {
    const prometheus = services.prometheus!;
    const script = [...(prometheus.entrypoint ?? []), ...(prometheus.command ?? [])].join(' ');
    for (const job of jobs.filter((j) => j.dns_sd_configs)) {
      expect(job.authorization?.type).toBe('Bearer');
      const file = job.authorization!.credentials_file;
      expect(script).toContain(`"$MAILER_METRICS_TOKEN" > ${file}`);
      // Written into the data volume, which Prometheus's user owns.
      const volume = (prometheus.volumes ?? []).find((v) => v.type === 'volume');
      expect(file.startsWith(`${volume!.target}/`)).toBe(true);
    }
    expect(prometheus.environment?.MAILER_METRICS_TOKEN).toBe('');
    const withToken = loadCompose({ ...ENV, MAILER_METRICS_TOKEN: 'scrape-secret' }, ['observability']);
    expect(withToken.project.services.prometheus!.environment?.MAILER_METRICS_TOKEN).toBe('scrape-secret');
    expect(withToken.project.services.api!.environment?.MAILER_METRICS_TOKEN).toBe('scrape-secret');
    expect(withToken.project.services.worker!.environment?.MAILER_METRICS_TOKEN).toBe('scrape-secret');
  });

  it('is the file Prometheus starts with', () => {
    const command = (services.prometheus!.command ?? []).join(' ');
    expect(command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    expect(services.prometheus!.healthcheck!.test!.join(' ')).toContain('/-/ready');
  });
});

describe('deploy/grafana', () => {
  const grafanaEnv = () => services.grafana!.environment ?? {};
  const mountTarget = () =>
    (services.grafana!.volumes ?? []).find(
      (v) => v.type === 'bind' && v.source === path.join(repoRoot, 'deploy/grafana'),
    )!.target;

  it('provisions the compose Prometheus as its data source, with the uid the dashboard refers to', () => {
    expect(grafanaEnv().GF_PATHS_PROVISIONING).toBe(`${mountTarget()}/provisioning`);
    const ds = loadYaml('deploy/grafana/provisioning/datasources/prometheus.yml') as {
      datasources: { uid: string; type: string; url: string; isDefault: boolean }[];
    };
    expect(ds.datasources).toEqual([
      expect.objectContaining({
        uid: 'prometheus',
        type: 'prometheus',
        url: 'http://prometheus:9090',
        isDefault: true,
      }),
    ]);
    expect(services.prometheus!.healthcheck!.test!.join(' ')).toContain('127.0.0.1:9090');
  });

  it('loads deploy/grafana/mailer-dashboard.json from where compose mounts it', () => {
    const dashboards = loadYaml('deploy/grafana/provisioning/dashboards/mailer.yml') as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(dashboards.providers).toHaveLength(1);
    const provider = dashboards.providers[0]!;
    expect(provider.type).toBe('file');
    // The dashboard file's path inside the container, under the directory the provider scans.
    const inContainer = path.posix.join(mountTarget(), 'mailer-dashboard.json');
    expect(path.posix.relative(provider.options.path, inContainer).startsWith('..')).toBe(false);
  });

  it('shows dashboards read-only, on loopback', () => {
    expect(grafanaEnv()).toMatchObject({
      GF_AUTH_ANONYMOUS_ENABLED: 'true',
      GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer',
      GF_AUTH_DISABLE_LOGIN_FORM: 'true',
    });
    expect((services.grafana!.ports ?? []).map((p) => p.host_ip)).toEqual(['127.0.0.1']);
  });
});
