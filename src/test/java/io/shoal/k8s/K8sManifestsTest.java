package io.shoal.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.typesafe.config.Config;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2beta2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2beta2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2beta2.MetricSpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.shoal.config.Addresses;
import io.shoal.cache.CacheSettings;
import io.shoal.config.ConfigLoader;
import io.shoal.config.ShoalConfig;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

/**
 * The manifests in k8s/ are well-formed Kubernetes objects (no unknown or misspelled field) and
 * agree with each other, with the shoal.conf they ship in their ConfigMap, and with the image
 * that pom.xml builds.
 */
class K8sManifestsTest {
  private static final Path K8S = Path.of("k8s");
  /** Named so that {@code kubectl apply -f k8s/}, which reads only *.yaml/*.yml/*.json, skips it. */
  private static final String KUSTOMIZATION = "Kustomization";

  /** The kinds the manifests may hold, by apiVersion and kind. */
  private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
      "v1/ConfigMap", ConfigMap.class,
      "v1/Service", Service.class,
      "v1/ServiceAccount", ServiceAccount.class,
      "apps/v1/StatefulSet", StatefulSet.class,
      "rbac.authorization.k8s.io/v1/Role", Role.class,
      "rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class,
      "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class,
      "networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class,
      // fabric8 5.8 models autoscaling/v2beta2, whose schema autoscaling/v2 kept field for field
      "autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class);

  private static final ObjectMapper STRICT = strictMapper();

  private static List<HasMetadata> objects;
  private static StatefulSet statefulSet;
  private static PodSpec pod;
  private static Container container;
  private static ConfigMap configMap;
  private static Config shoalConf;

  @BeforeAll
  static void load(@TempDir Path tmp) throws IOException {
    objects = new ArrayList<>();
    for (Path file : manifestFiles()) {
      objects.addAll(parse(file.toString(), Files.readString(file)));
    }
    statefulSet = only(StatefulSet.class);
    pod = statefulSet.getSpec().getTemplate().getSpec();
    assertEquals(1, pod.getContainers().size(), "one container in the shoal pod");
    container = pod.getContainers().get(0);
    configMap = only(ConfigMap.class);
    String text = configMap.getData().get("shoal.conf");
    assertNotNull(text, "ConfigMap " + configMap.getMetadata().getName() + " has no shoal.conf key");
    // Loaded exactly as `serve --config FILE` does: the file over the embedded defaults.
    Path file = tmp.resolve("shoal.conf");
    Files.writeString(file, text);
    shoalConf = ConfigLoader.load(Optional.of(file));
  }

  // ---- parsing ------------------------------------------------------------------------------

  @Test
  void everyManifestIsAKnownKindWithoutUnknownFields() {
    Set<String> kinds = new TreeSet<>();
    for (HasMetadata o : objects) {
      kinds.add(o.getKind());
      List<String> extra = new ArrayList<>();
      collectAdditionalProperties(o, o.getKind() + "/" + o.getMetadata().getName(), extra);
      assertTrue(extra.isEmpty(), "fields the Kubernetes model does not know: " + extra);
    }
    assertEquals(
        new TreeSet<>(Set.of("ConfigMap", "NetworkPolicy", "PodDisruptionBudget", "Role", "RoleBinding", "Service",
            "ServiceAccount", "StatefulSet")),
        kinds);
    assertEquals(2, all(Service.class).size(), "the DNS Service and the headless Service");
  }

  @Test
  void aMisspelledFieldFailsTheParse() {
    String yaml = String.join("\n",
        "apiVersion: apps/v1",
        "kind: StatefulSet",
        "metadata: {name: typo}",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        "        - name: c",
        "          readinesProbe: {httpGet: {path: /ready, port: 8558}}",
        "");
    AssertionError e = assertThrows(AssertionError.class, () -> parse("typo.yaml", yaml));
    assertTrue(e.getMessage().contains("readinesProbe"), e.getMessage());

    String topLevel = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespaces: y}\n";
    AssertionError e2 = assertThrows(AssertionError.class, () -> parse("top.yaml", topLevel));
    assertTrue(e2.getMessage().contains("namespaces"), e2.getMessage());

    // The walk over parsed objects finds what a lenient parse put into additionalProperties.
    ConfigMap lenient;
    try {
      lenient = new ObjectMapper(new YAMLFactory()).readValue(topLevel, ConfigMap.class);
    } catch (IOException io) {
      throw new AssertionError(io);
    }
    List<String> extra = new ArrayList<>();
    collectAdditionalProperties(lenient, "ConfigMap/x", extra);
    assertEquals(List.of("ConfigMap/x.metadata: [namespaces]"), extra);

    String unknownKind = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n";
    assertThrows(AssertionError.class, () -> parse("kind.yaml", unknownKind));
  }

  @Test
  void jacksonStaysOnAkkasVersion() {
    // akka-serialization-jackson 2.6 (jackson-module-scala 2.11) refuses jackson-databind >= 2.12.
    for (com.fasterxml.jackson.core.Version v : List.of(
        com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION,
        com.fasterxml.jackson.core.json.PackageVersion.VERSION,
        com.fasterxml.jackson.dataformat.yaml.PackageVersion.VERSION)) {
      assertEquals(2, v.getMajorVersion(), v.toFullString());
      assertEquals(11, v.getMinorVersion(), v.toFullString());
    }
  }

  @Test
  void kustomizationListsEveryManifestAndNoNamespace() throws IOException {
    JsonNode k = new ObjectMapper(new YAMLFactory()).readTree(K8S.resolve(KUSTOMIZATION).toFile());
    assertEquals("Kustomization", k.path("kind").asText());
    assertFalse(k.has("namespace"), "the namespace is the operator's choice (kubectl -n)");
    Set<String> listed = new TreeSet<>();
    k.path("resources").forEach(r -> listed.add(r.asText()));
    Set<String> files = manifestFiles().stream()
        .map(f -> f.getFileName().toString())
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(files, listed, "apply -k and apply -f must create the same objects");
  }

  @Test
  void noManifestSetsANamespace() {
    for (HasMetadata o : objects) {
      assertNull(o.getMetadata().getNamespace(), o.getKind() + " " + o.getMetadata().getName());
    }
    assertNull(statefulSet.getSpec().getTemplate().getMetadata().getNamespace());
    for (PersistentVolumeClaim claim : statefulSet.getSpec().getVolumeClaimTemplates()) {
      assertNull(claim.getMetadata().getNamespace());
    }
    for (Subject s : only(RoleBinding.class).getSubjects()) {
      // Left out, a ServiceAccount subject of a RoleBinding means the binding's own namespace.
      assertNull(s.getNamespace(), "RoleBinding subject " + s.getName());
    }
  }

  // ---- DNS ----------------------------------------------------------------------------------

  @Test
  void dnsServiceForwardsPort53OverUdpAndTcpToTheListenPort() {
    int udp = listenPort("udp");
    int tcp = listenPort("tcp");
    assertEquals(5353, udp, "shoal.listen.udp port");
    assertEquals(5353, tcp, "shoal.listen.tcp port");
    assertEquals("0.0.0.0", Addresses.parse(shoalConf.getString("shoal.listen.udp"), 53, "udp").getAddress().getHostAddress());
    assertEquals("0.0.0.0", Addresses.parse(shoalConf.getString("shoal.listen.tcp"), 53, "tcp").getAddress().getHostAddress());

    Service dns = service("shoal-dns");
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (ServicePort p : dns.getSpec().getPorts()) {
      assertEquals(53, p.getPort(), p.getName());
      assertEquals(Integer.valueOf(5353), p.getTargetPort().getIntVal(), p.getName());
      ports.put(p.getProtocol(), p.getPort());
    }
    assertEquals(Set.of("UDP", "TCP"), ports.keySet());
    assertEquals(2, dns.getSpec().getPorts().size());
    assertEquals(Map.of("UDP", udp, "TCP", tcp), Map.of(
        "UDP", containerPort("UDP", udp).getContainerPort(),
        "TCP", containerPort("TCP", tcp).getContainerPort()));
  }

  // ---- cluster ------------------------------------------------------------------------------

  @Test
  void probesAskAkkaManagementOnItsConfiguredPort() {
    int management = shoalConf.getInt("shoal.cluster.management.port");
    assertEquals(8558, management, "shoal.cluster.management.port");
    // kubernetes-api discovery contacts the port of this name on each pod it finds.
    assertEquals(management, namedPort("management").getContainerPort());

    Probe ready = container.getReadinessProbe();
    Probe alive = container.getLivenessProbe();
    assertNotNull(ready, "readinessProbe");
    assertNotNull(alive, "livenessProbe");
    assertEquals("/ready", ready.getHttpGet().getPath());
    assertEquals("/alive", alive.getHttpGet().getPath());
    assertEquals(management, resolve(ready.getHttpGet().getPort()));
    assertEquals(management, resolve(alive.getHttpGet().getPort()));
  }

  @Test
  void headlessServicePublishesManagementAndRemotingOfNotReadyPods() {
    Service internal = service(statefulSet.getSpec().getServiceName());
    assertEquals("shoal-internal", internal.getMetadata().getName());
    assertEquals("None", internal.getSpec().getClusterIP());
    assertEquals(Boolean.TRUE, internal.getSpec().getPublishNotReadyAddresses());
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (ServicePort p : internal.getSpec().getPorts()) {
      assertEquals(p.getPort(), resolve(p.getTargetPort()), p.getName());
      ports.put(p.getName(), p.getPort());
    }
    assertEquals(Map.of(
        "management", shoalConf.getInt("shoal.cluster.management.port"),
        "remoting", shoalConf.getInt("shoal.cluster.remoting.port")), ports);
    assertEquals(25520, shoalConf.getInt("shoal.cluster.remoting.port"));
    assertEquals(25520, namedPort("remoting").getContainerPort());
  }

  @Test
  void roleAllowsOnlyReadingPodsToTheStatefulSetsServiceAccount() {
    Role role = only(Role.class);
    assertEquals(1, role.getRules().size());
    PolicyRule rule = role.getRules().get(0);
    assertEquals(List.of(""), rule.getApiGroups());
    assertEquals(List.of("pods"), rule.getResources());
    assertEquals(3, rule.getVerbs().size(), "verbs " + rule.getVerbs());
    assertEquals(Set.of("get", "watch", "list"), new HashSet<>(rule.getVerbs()));

    RoleBinding binding = only(RoleBinding.class);
    assertEquals("Role", binding.getRoleRef().getKind());
    assertEquals("rbac.authorization.k8s.io", binding.getRoleRef().getApiGroup());
    assertEquals(role.getMetadata().getName(), binding.getRoleRef().getName());
    assertEquals(1, binding.getSubjects().size());
    Subject subject = binding.getSubjects().get(0);
    assertEquals("ServiceAccount", subject.getKind());
    String account = pod.getServiceAccountName();
    assertNotNull(account, "the pod names its ServiceAccount");
    assertEquals(account, subject.getName());
    assertEquals(account, only(ServiceAccount.class).getMetadata().getName());
    assertFalse(Boolean.FALSE.equals(pod.getAutomountServiceAccountToken()),
        "discovery needs the ServiceAccount token in the pod");
  }

  @Test
  void podLabelsMatchDiscoveryAndEverySelector() {
    assertEquals("kubernetes-api", shoalConf.getString("shoal.cluster.discovery.method"));
    Map<String, String> selector = parseSelector(shoalConf.getString("shoal.cluster.discovery.pod_label_selector"));
    assertEquals(Map.of("app", "shoal"), selector);
    Map<String, String> labels = statefulSet.getSpec().getTemplate().getMetadata().getLabels();
    assertContains(labels, selector, "pod labels vs discovery selector");
    assertContains(labels, matchLabelsOnly(statefulSet.getSpec().getSelector()), "StatefulSet selector");
    for (Service s : all(Service.class)) {
      assertEquals(selector, s.getSpec().getSelector(), "selector of Service " + s.getMetadata().getName());
    }
    assertEquals(selector, matchLabelsOnly(only(PodDisruptionBudget.class).getSpec().getSelector()));
    assertEquals(selector, matchLabelsOnly(only(NetworkPolicy.class).getSpec().getPodSelector()));
  }

  @Test
  void podsSpreadOverZonesThenMachinesWithoutRefusingToSchedule() {
    Map<String, String> selector = parseSelector(shoalConf.getString("shoal.cluster.discovery.pod_label_selector"));
    List<String> keys = new ArrayList<>();
    for (TopologySpreadConstraint c : pod.getTopologySpreadConstraints()) {
      keys.add(c.getTopologyKey());
      assertEquals(1, c.getMaxSkew(), c.getTopologyKey());
      assertEquals("ScheduleAnyway", c.getWhenUnsatisfiable(), "a small or single-zone cluster still runs every replica");
      assertEquals(selector, matchLabelsOnly(c.getLabelSelector()), c.getTopologyKey());
    }
    assertEquals(List.of("topology.kubernetes.io/zone", "kubernetes.io/hostname"), keys);
  }

  @Test
  void cpuIsRequestedButNeverLimited() {
    assertNotNull(container.getResources().getRequests().get("cpu"), "a CPU request, for scheduling");
    assertNull(container.getResources().getLimits().get("cpu"), "a CPU limit throttles a DNS server into latency spikes");
    assertEquals(container.getResources().getRequests().get("memory"), container.getResources().getLimits().get("memory"));
  }

  @Test
  void networkPolicyAdmitsRemotingAndManagementOnlyFromShoalPodsAndDnsFromTheCluster() {
    NetworkPolicy policy = only(NetworkPolicy.class);
    assertEquals(List.of("Ingress"), policy.getSpec().getPolicyTypes());
    Map<String, String> shoalPods = matchLabelsOnly(policy.getSpec().getPodSelector());
    Map<String, List<NetworkPolicyPeer>> fromByPort = new LinkedHashMap<>();
    for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
      assertFalse(rule.getFrom().isEmpty(), "every rule names its sources (an empty from admits the world)");
      for (NetworkPolicyPort port : rule.getPorts()) {
        fromByPort.computeIfAbsent(port.getPort().getIntVal() + "/" + port.getProtocol(), k -> new ArrayList<>())
            .addAll(rule.getFrom());
      }
    }
    for (String internal : List.of(containerPort("TCP", shoalConf.getInt("shoal.cluster.remoting.port")).getContainerPort()
        + "/TCP", shoalConf.getInt("shoal.cluster.management.port") + "/TCP")) {
      List<NetworkPolicyPeer> from = fromByPort.get(internal);
      assertNotNull(from, internal + " is admitted from the other shoal pods");
      for (NetworkPolicyPeer peer : from) {
        assertNull(peer.getNamespaceSelector(), internal + ": only this namespace");
        assertNull(peer.getIpBlock(), internal + ": no address ranges");
        assertEquals(shoalPods, matchLabelsOnly(peer.getPodSelector()), internal + ": only shoal pods");
      }
    }
    for (String dns : List.of("5353/UDP", "5353/TCP")) {
      List<NetworkPolicyPeer> from = fromByPort.get(dns);
      assertNotNull(from, dns + " is admitted");
      assertTrue(from.stream().anyMatch(p -> p.getNamespaceSelector() != null && p.getPodSelector() == null
              && (p.getNamespaceSelector().getMatchLabels() == null || p.getNamespaceSelector().getMatchLabels().isEmpty())
              && (p.getNamespaceSelector().getMatchExpressions() == null
                  || p.getNamespaceSelector().getMatchExpressions().isEmpty())),
          dns + " from every pod of the cluster");
    }
    Set<String> covered = new TreeSet<>(fromByPort.keySet());
    Set<String> exposed = container.getPorts().stream()
        .map(p -> p.getContainerPort() + "/" + p.getProtocol())
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(exposed, covered, "every container port has a rule, and no rule opens another port");
  }

  @Test
  void remotingIsPlainTcpUnlessTheTlsOptionSetsItsVariables() {
    assertEquals("tcp", shoalConf.getString("akka.remote.artery.transport"));
  }

  @Test
  void imageIsWhatTheLocalBuildNamesAndIsPulledOnlyWhenAbsent() throws Exception {
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
    String version = texts(pom, "/project/version").get(0);
    assertEquals(pomProperty("jib.to.image").replace("${project.version}", version), container.getImage(),
        "the image jib:buildTar / jib:dockerBuild names by default");
    assertEquals("IfNotPresent", container.getImagePullPolicy());
    assertTrue(pomProperty("jib.from.image").matches("[a-z0-9./-]+:[0-9a-z.-]+@sha256:[0-9a-f]{64}"),
        "the base image is pinned by digest: " + pomProperty("jib.from.image"));
    assertEquals(List.of("${jib.from.image}"),
        texts(pom, "/project/build/plugins/plugin[artifactId='jib-maven-plugin']/configuration/from/image"));
  }

  /** The base with the named components of k8s/options/, as {@code kubectl kustomize} renders it. */
  private static List<HasMetadata> renderWith(Path overlay, String... options) throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(onPath("kubectl"), "kubectl renders kustomizations");
    // kustomize takes relative paths only.
    Path k8s = overlay.toAbsolutePath().relativize(K8S.toAbsolutePath());
    List<String> lines = new ArrayList<>(List.of(
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        "resources: [\"" + k8s + "\"]",
        "components:"));
    for (String option : options) {
      lines.add("  - " + k8s.resolve("options/" + option));
    }
    Files.writeString(overlay.resolve("kustomization.yaml"), String.join("\n", lines) + "\n");
    Process p = new ProcessBuilder("kubectl", "kustomize", overlay.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "kubectl kustomize finished");
    assertEquals(0, p.exitValue(), out);
    return parse("kubectl kustomize", out);
  }

  @Test
  void theOptionsRenderWithKustomize(@TempDir Path overlay) throws Exception {
    List<HasMetadata> rendered = renderWith(overlay, "critical-priority", "fixed-cluster-ip", "artery-tls",
        "encrypted-dns");
    StatefulSet sts = rendered.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast)
        .findFirst().orElseThrow();
    PodSpec spec = sts.getSpec().getTemplate().getSpec();
    assertEquals("system-cluster-critical", spec.getPriorityClassName());
    Service dns = rendered.stream().filter(Service.class::isInstance).map(Service.class::cast)
        .filter(s -> s.getMetadata().getName().equals("shoal-dns")).findFirst().orElseThrow();
    assertTrue(dns.getSpec().getClusterIP().matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), dns.getSpec().getClusterIP());

    Volume tls = spec.getVolumes().stream().filter(v -> v.getName().equals("artery-tls")).findFirst().orElseThrow();
    assertEquals("shoal-artery-tls", tls.getSecret().getSecretName());
    Container c = spec.getContainers().get(0);
    VolumeMount mount = c.getVolumeMounts().stream().filter(m -> m.getName().equals(tls.getName())).findFirst().orElseThrow();
    Config reference = com.typesafe.config.ConfigFactory.defaultReference();
    assertEquals(reference.getString("akka.remote.artery.ssl.rotating-keys-engine.secret-mount-point"), mount.getMountPath(),
        "Akka's rotating-keys engine reads tls.key, tls.crt and ca.crt there");
    Map<String, String> env = new LinkedHashMap<>();
    c.getEnv().forEach(e -> env.put(e.getName(), e.getValue()));
    assertEquals("tls-tcp", env.get("ARTERY_TRANSPORT"));
    Class.forName(env.get("ARTERY_SSL_ENGINE_PROVIDER")); // a class Akka 2.6 has
    String conf = rendered.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
        .findFirst().orElseThrow().getData().get("shoal.conf");
    assertTrue(conf.contains("akka.remote.artery.transport = ${?ARTERY_TRANSPORT}"), conf);
    assertTrue(conf.contains("akka.remote.artery.ssl.ssl-engine-provider = ${?ARTERY_SSL_ENGINE_PROVIDER}"), conf);
  }

  @Test
  void theHpaOptionScalesTheStatefulSetOnCpuOnePodAtATime(@TempDir Path overlay) throws Exception {
    List<HasMetadata> rendered = renderWith(overlay, "hpa");
    StatefulSet sts = rendered.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast)
        .findFirst().orElseThrow();
    HorizontalPodAutoscaler hpa = rendered.stream().filter(HorizontalPodAutoscaler.class::isInstance)
        .map(HorizontalPodAutoscaler.class::cast).findFirst().orElseThrow();
    assertNull(sts.getSpec().getReplicas(), "with the autoscaler, kubectl apply must not reset the replica count");
    assertEquals("apps/v1", hpa.getSpec().getScaleTargetRef().getApiVersion());
    assertEquals("StatefulSet", hpa.getSpec().getScaleTargetRef().getKind());
    assertEquals(sts.getMetadata().getName(), hpa.getSpec().getScaleTargetRef().getName());
    PodDisruptionBudget pdb = only(PodDisruptionBudget.class);
    assertTrue(hpa.getSpec().getMinReplicas() >= 3 && hpa.getSpec().getMinReplicas()
        > pdb.getSpec().getMaxUnavailable().getIntVal(), "a majority survives the one pod the budget lets go");
    assertTrue(hpa.getSpec().getMaxReplicas() > hpa.getSpec().getMinReplicas());

    assertEquals(1, hpa.getSpec().getMetrics().size(), hpa.getSpec().getMetrics().toString());
    MetricSpec cpu = hpa.getSpec().getMetrics().get(0);
    assertEquals("Resource", cpu.getType());
    assertEquals("cpu", cpu.getResource().getName());
    assertEquals("Utilization", cpu.getResource().getTarget().getType());
    int target = cpu.getResource().getTarget().getAverageUtilization();
    assertTrue(target > 0 && target <= 100, "utilization of the request, at most all of it: " + target);
    Container c = sts.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertNotNull(c.getResources().getRequests().get("cpu"), "utilization is a share of the CPU request");

    // every change of the node count moves names to new owners: one pod at a time, down slowly
    for (HPAScalingRules rules : List.of(hpa.getSpec().getBehavior().getScaleUp(),
        hpa.getSpec().getBehavior().getScaleDown())) {
      assertEquals(1, rules.getPolicies().size(), rules.toString());
      assertEquals("Pods", rules.getPolicies().get(0).getType());
      assertEquals(1, rules.getPolicies().get(0).getValue());
    }
    assertTrue(hpa.getSpec().getBehavior().getScaleDown().getStabilizationWindowSeconds() >= 300);
  }

  @Test
  void theEncryptedDnsOptionServesDotAndDohWithTheSecretsCertificate(@TempDir Path overlay) throws Exception {
    List<HasMetadata> rendered = renderWith(overlay, "encrypted-dns");
    PodSpec spec = rendered.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast)
        .findFirst().orElseThrow().getSpec().getTemplate().getSpec();
    Container c = spec.getContainers().get(0);
    Volume secret = spec.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow();
    assertEquals("shoal-dns-tls", secret.getSecret().getSecretName());
    VolumeMount mount = c.getVolumeMounts().stream().filter(m -> m.getName().equals(secret.getName()))
        .findFirst().orElseThrow();
    assertEquals(Boolean.TRUE, mount.getReadOnly());

    // shoal.conf as the pod reads it: the ConfigMap over the defaults, the container's variables set
    String text = rendered.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
        .findFirst().orElseThrow().getData().get("shoal.conf");
    Map<String, String> env = new LinkedHashMap<>();
    c.getEnv().stream().filter(e -> e.getValue() != null).forEach(e -> env.put(e.getName(), e.getValue()));
    Config conf = com.typesafe.config.ConfigFactory.parseString(text)
        .resolveWith(com.typesafe.config.ConfigFactory.parseMap(env), com.typesafe.config.ConfigResolveOptions.defaults()
            .setUseSystemEnvironment(false).setAllowUnresolved(true));
    // a kubernetes.io/tls Secret's two keys, in the mounted directory
    assertEquals(mount.getMountPath() + "/tls.crt", conf.getString("shoal.tls.certificate"));
    assertEquals(mount.getMountPath() + "/tls.key", conf.getString("shoal.tls.private_key"));

    Map<String, Integer> containerPorts = new LinkedHashMap<>();
    c.getPorts().forEach(p -> containerPorts.put(p.getName(), p.getContainerPort()));
    assertEquals("0.0.0.0:" + containerPorts.get("dns-tls"), conf.getString("shoal.listen.tls"));
    assertEquals("0.0.0.0:" + containerPorts.get("dns-https"), conf.getString("shoal.listen.https"));

    Service dns = rendered.stream().filter(Service.class::isInstance).map(Service.class::cast)
        .filter(s -> s.getMetadata().getName().equals("shoal-dns")).findFirst().orElseThrow();
    Map<Integer, String> servicePorts = new LinkedHashMap<>();
    dns.getSpec().getPorts().stream().filter(p -> p.getProtocol().equals("TCP"))
        .forEach(p -> servicePorts.put(p.getPort(), p.getTargetPort().getStrVal()));
    assertEquals("dns-tls", servicePorts.get(853));
    assertEquals("dns-https", servicePorts.get(443));

    NetworkPolicy policy = rendered.stream().filter(NetworkPolicy.class::isInstance).map(NetworkPolicy.class::cast)
        .findFirst().orElseThrow();
    Set<Integer> fromCluster = policy.getSpec().getIngress().stream()
        .filter(r -> r.getFrom().stream().anyMatch(f -> f.getNamespaceSelector() != null))
        .flatMap(r -> r.getPorts().stream()).map(p -> p.getPort().getIntVal()).collect(Collectors.toSet());
    assertTrue(fromCluster.containsAll(List.of(containerPorts.get("dns-tls"), containerPorts.get("dns-https"))),
        "any pod may ask over DoT and DoH as over plain DNS: " + fromCluster);
  }

  @Test
  void theRecursiveOptionResolvesFromTheRootAndLetsOnlyDnsApiAndPeersOut(@TempDir Path overlay) throws Exception {
    List<HasMetadata> rendered = renderWith(overlay, "recursive");
    Container c = rendered.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast)
        .findFirst().orElseThrow().getSpec().getTemplate().getSpec().getContainers().get(0);
    Map<String, String> env = new LinkedHashMap<>();
    c.getEnv().stream().filter(e -> e.getValue() != null).forEach(e -> env.put(e.getName(), e.getValue()));
    String text = rendered.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
        .findFirst().orElseThrow().getData().get("shoal.conf");
    Config conf = com.typesafe.config.ConfigFactory.parseString(text)
        .resolveWith(com.typesafe.config.ConfigFactory.parseMap(env), com.typesafe.config.ConfigResolveOptions.defaults()
            .setUseSystemEnvironment(false).setAllowUnresolved(true));
    String mode = conf.getString("shoal.upstreams.default.mode");
    // The pod's shoal.conf with the option's mode: a valid configuration with a recursive default group.
    ShoalConfig config = ShoalConfig.from(com.typesafe.config.ConfigFactory
        .parseMap(Map.of("shoal.upstreams.default.mode", mode)).withFallback(shoalConf));
    assertEquals(io.shoal.config.UpstreamGroupSettings.Mode.RECURSIVE, config.upstreams().get("default").mode());

    NetworkPolicy policy = rendered.stream().filter(NetworkPolicy.class::isInstance).map(NetworkPolicy.class::cast)
        .findFirst().orElseThrow();
    assertEquals(List.of("Ingress", "Egress"), policy.getSpec().getPolicyTypes());
    Set<String> anywhere = new TreeSet<>();
    Set<String> toShoal = new TreeSet<>();
    Map<String, String> shoalPods = matchLabelsOnly(policy.getSpec().getPodSelector());
    for (var rule : policy.getSpec().getEgress()) {
      Set<String> ports = rule.getPorts().stream().map(p -> p.getPort().getIntVal() + "/" + p.getProtocol())
          .collect(Collectors.toSet());
      if (rule.getTo() == null || rule.getTo().isEmpty()) {
        anywhere.addAll(ports);
      } else {
        for (NetworkPolicyPeer peer : rule.getTo()) {
          assertNull(peer.getIpBlock(), "peers by label only");
          assertEquals(shoalPods, matchLabelsOnly(peer.getPodSelector()), "only shoal pods");
        }
        toShoal.addAll(ports);
      }
    }
    assertEquals(new TreeSet<>(List.of("53/UDP", "53/TCP", "853/TCP", "443/TCP", "6443/TCP")), anywhere,
        "authorities anywhere over DNS and DoT, the Kubernetes API for discovery; nothing else to the world");
    assertEquals(new TreeSet<>(List.of(shoalConf.getInt("shoal.cluster.remoting.port") + "/TCP",
        shoalConf.getInt("shoal.cluster.management.port") + "/TCP")), toShoal, "remoting and bootstrap to peers");
  }

  @Test
  void encryptedDnsIsOffUnlessTheOptionSetsItsVariables() {
    ShoalConfig config = ShoalConfig.from(shoalConf);
    assertEquals(null, config.tls().dot());
    assertEquals(null, config.tls().doh());
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  @Test
  void bootstrapCanFormTheCluster() {
    int replicas = statefulSet.getSpec().getReplicas();
    assertEquals(3, replicas);
    assertTrue(replicas >= shoalConf.getInt("shoal.cluster.discovery.required_contact_points"),
        "fewer replicas than required contact points: a new cluster would never form");
    assertEquals("Parallel", statefulSet.getSpec().getPodManagementPolicy());
    assertTrue(shoalConf.getBoolean("shoal.cluster.enabled"));
    assertEquals("status.podIP", env("POD_IP").getValueFrom().getFieldRef().getFieldPath());
    assertEquals("metadata.namespace", env("NAMESPACE").getValueFrom().getFieldRef().getFieldPath());
    assertEquals(Integer.valueOf(1), only(PodDisruptionBudget.class).getSpec().getMaxUnavailable().getIntVal());
  }

  // ---- pod ----------------------------------------------------------------------------------

  @Test
  void podRunsLockedDownAsTheImagesUser() throws Exception {
    PodSecurityContext podSec = pod.getSecurityContext();
    SecurityContext sec = container.getSecurityContext();
    assertEquals(Boolean.TRUE, sec.getReadOnlyRootFilesystem());
    assertEquals(Boolean.TRUE, podSec.getRunAsNonRoot());
    assertEquals(Boolean.TRUE, sec.getRunAsNonRoot());
    assertEquals(Boolean.FALSE, sec.getAllowPrivilegeEscalation());
    assertEquals(List.of("ALL"), sec.getCapabilities().getDrop());
    assertTrue(sec.getCapabilities().getAdd() == null || sec.getCapabilities().getAdd().isEmpty());
    assertNotNull(podSec.getRunAsUser());
    assertTrue(podSec.getRunAsUser() > 0);
    assertEquals(podSec.getRunAsGroup(), podSec.getFsGroup(), "the volume belongs to the pod's group");
    assertEquals(podSec.getRunAsUser() + ":" + podSec.getRunAsGroup(), pomProperty("shoal.image.user"),
        "the image (pom.xml, Jib) and the pod run as the same numeric user");
    // With the root filesystem read-only, the JVM and lmdbjava's native library need a writable /tmp.
    assertNotNull(pod.getVolumes().stream()
        .filter(v -> v.getName().equals(mount("/tmp").getName()) && v.getEmptyDir() != null)
        .findFirst().orElse(null), "/tmp is an emptyDir");
    Long grace = pod.getTerminationGracePeriodSeconds();
    assertNotNull(grace);
    assertTrue(grace > shoalConf.getDuration("shoal.shutdown.grace").toSeconds() + 10,
        "terminationGracePeriodSeconds leaves time to leave the cluster after shutdown.grace");
  }

  @Test
  void lmdbCacheLivesOnThePodsOwnVolume() {
    assertEquals("lmdb", shoalConf.getString("shoal.caches.answers.backend"));
    assertEquals("periodic", shoalConf.getString("shoal.caches.answers.lmdb.sync"));
    Path lmdb = Path.of(shoalConf.getString("shoal.caches.answers.lmdb.path"));
    assertTrue(lmdb.isAbsolute(), lmdb.toString());
    assertEquals(Path.of("/var/lib/shoal/answers"), lmdb);
    VolumeMount mount = mount(lmdb.getParent().toString());
    assertFalse(Boolean.TRUE.equals(mount.getReadOnly()), "the cache volume is writable");
    List<PersistentVolumeClaim> claims = statefulSet.getSpec().getVolumeClaimTemplates();
    PersistentVolumeClaim claim = claims.stream()
        .filter(c -> c.getMetadata().getName().equals(mount.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volumeClaimTemplate named " + mount.getName()));
    assertTrue(pod.getVolumes().stream().noneMatch(v -> v.getName().equals(mount.getName())),
        "the data volume comes from the claim template, not from a pod volume");
    assertEquals(List.of("ReadWriteOnce"), claim.getSpec().getAccessModes());
    // LMDB files grow up to shard_count x map_size; a smaller volume would fill up under it.
    BigDecimal storage = Quantity.getAmountInBytes(claim.getSpec().getResources().getRequests().get("storage"));
    long needed = shoalConf.getLong("shoal.caches.answers.lmdb.shard_count")
        * shoalConf.getBytes("shoal.caches.answers.lmdb.map_size");
    assertTrue(storage.compareTo(BigDecimal.valueOf(needed)) >= 0,
        "volume " + storage + " bytes < shard_count x map_size = " + needed);
  }

  @Test
  void prometheusAnnotationsPointAtTheMetricsEndpoint() {
    int port = shoalConf.getInt("shoal.metrics.prometheus.port");
    assertEquals(9095, port, "shoal.metrics.prometheus.port");
    assertEquals("0.0.0.0", shoalConf.getString("shoal.metrics.prometheus.host"));
    assertTrue(shoalConf.getBoolean("shoal.metrics.enabled"));
    Map<String, String> a = statefulSet.getSpec().getTemplate().getMetadata().getAnnotations();
    assertEquals("true", a.get("prometheus.io/scrape"));
    assertEquals(String.valueOf(port), a.get("prometheus.io/port"));
    assertEquals("/metrics", a.get("prometheus.io/path"));
    assertEquals(port, containerPort("TCP", port).getContainerPort());
  }

  @Test
  void configMapIsMountedWhereServeReadsIt() {
    assertEquals(List.of("serve", "--config", "/etc/shoal/shoal.conf"), container.getArgs());
    assertTrue(container.getCommand() == null || container.getCommand().isEmpty(),
        "no command: the image's entrypoint (java ... io.shoal.Main) stays");
    VolumeMount m = mount("/etc/shoal");
    assertEquals(Boolean.TRUE, m.getReadOnly());
    Volume v = pod.getVolumes().stream().filter(x -> x.getName().equals(m.getName())).findFirst().orElseThrow();
    assertEquals(configMap.getMetadata().getName(), v.getConfigMap().getName());
    assertEquals("shoal-config", configMap.getMetadata().getName());
  }

  @Test
  void shoalConfIsAValidConfiguration() {
    ShoalConfig config = ShoalConfig.from(shoalConf);
    assertEquals(CacheSettings.Backend.LMDB, config.cache("answers").backend());
    assertEquals(listenPort("udp"), config.udpListen().getPort());
    assertEquals(shoalConf.getInt("shoal.metrics.prometheus.port"), config.metricsPort());
    assertTrue(config.cluster().enabled());
    assertEquals(io.shoal.config.UpstreamGroupSettings.Mode.FORWARD, config.upstreams().get("default").mode(),
        "forwarding unless the recursive option sets SHOAL_UPSTREAM_MODE");
    assertEquals(io.shoal.config.ClusterSettings.Discovery.KUBERNETES_API, config.cluster().discovery());
    assertEquals("app=shoal", config.cluster().podLabelSelector());
  }

  @Test
  void imageMatchesThePod() throws Exception {
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
    String jib = "/project/build/plugins/plugin[artifactId='jib-maven-plugin']/configuration/container/";
    Set<String> imagePorts = new TreeSet<>();
    for (String p : texts(pom, jib + "ports/port")) {
      imagePorts.add(p.contains("/") ? p.toLowerCase() : p + "/tcp");
    }
    Set<String> podPorts = container.getPorts().stream()
        .map(p -> p.getContainerPort() + "/" + p.getProtocol().toLowerCase())
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(podPorts, imagePorts);
    assertEquals(container.getArgs(), texts(pom, jib + "args/arg"));
    assertEquals(List.of("io.shoal.Main"), texts(pom, jib + "mainClass"));
    // lmdbjava's opens, and the collector bin/shoal runs (docs/query-path.md, "JVM flags")
    assertEquals(List.of("--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "-XX:+UseG1GC"), texts(pom, jib + "jvmFlags/jvmFlag"));
    NodeList executions = (NodeList) XPathFactory.newInstance().newXPath().evaluate(
        "/project/build/plugins/plugin[artifactId='jib-maven-plugin']/executions", pom, XPathConstants.NODESET);
    assertEquals(0, executions.getLength(), "Jib must not be bound to a lifecycle phase");
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** Every file in k8s/ except the Kustomization; any other file must be a manifest. */
  private static List<Path> manifestFiles() {
    try (Stream<Path> files = Files.list(K8S)) {
      List<Path> list = files
          .filter(Files::isRegularFile)
          .filter(f -> !f.getFileName().toString().equals(KUSTOMIZATION))
          .sorted()
          .collect(Collectors.toList());
      assertFalse(list.isEmpty(), "no manifests in " + K8S.toAbsolutePath());
      return list;
    } catch (IOException e) {
      throw new AssertionError("cannot list " + K8S.toAbsolutePath(), e);
    }
  }

  /** Each YAML document of {@code text} as the fabric8 class of its apiVersion and kind. */
  private static List<HasMetadata> parse(String source, String text) {
    List<HasMetadata> result = new ArrayList<>();
    try (JsonParser parser = STRICT.getFactory().createParser(text)) {
      List<JsonNode> docs = STRICT.readValues(parser, JsonNode.class).readAll();
      for (JsonNode doc : docs) {
        if (doc == null || doc.isNull() || doc.isMissingNode()) {
          continue;
        }
        String type = doc.path("apiVersion").asText() + "/" + doc.path("kind").asText();
        Class<? extends HasMetadata> cls = KINDS.get(type);
        if (cls == null) {
          throw new AssertionError(source + ": unexpected apiVersion/kind " + type + "; expected one of " + new TreeSet<>(KINDS.keySet()));
        }
        HasMetadata o = STRICT.treeToValue(doc, cls);
        assertNotNull(o.getMetadata(), source + ": no metadata");
        assertNotNull(o.getMetadata().getName(), source + ": no metadata.name");
        result.add(o);
      }
    } catch (IOException e) {
      throw new AssertionError(source + ": " + e.getMessage(), e);
    }
    if (result.isEmpty()) {
      throw new AssertionError(source + ": no Kubernetes object");
    }
    return result;
  }

  /**
   * fabric8's model classes put fields they do not know into {@code additionalProperties} (a
   * JSON any-setter), so a misspelled field would pass silently. This mapper drops those
   * any-setters, making every unknown field an error that names the field and its path.
   */
  private static ObjectMapper strictMapper() {
    SimpleModule strict = new SimpleModule("no-additional-properties");
    strict.setDeserializerModifier(new BeanDeserializerModifier() {
      @Override
      public BeanDeserializerBuilder updateBuilder(
          DeserializationConfig config, BeanDescription bean, BeanDeserializerBuilder builder) {
        if (bean.getBeanClass().getName().startsWith("io.fabric8.")) {
          builder.setAnySetter(null);
          builder.setIgnoreUnknownProperties(false);
        }
        return builder;
      }
    });
    ObjectMapper mapper = new ObjectMapper(new YAMLFactory());
    mapper.registerModule(strict);
    mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    mapper.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    return mapper;
  }

  /** A second line of defence: no parsed object may carry fields outside the model. */
  private static void collectAdditionalProperties(Object o, String path, List<String> found) {
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object e : c) {
        collectAdditionalProperties(e, path + "[" + i++ + "]", found);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      m.forEach((k, v) -> collectAdditionalProperties(v, path + "." + k, found));
      return;
    }
    if (o == null || !o.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method getter : o.getClass().getMethods()) {
      if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())) {
        continue;
      }
      boolean extra = getter.getName().equals("getAdditionalProperties");
      JsonProperty property = getter.getAnnotation(JsonProperty.class);
      if (!extra && property == null) {
        continue;
      }
      Object value;
      try {
        value = getter.invoke(o);
      } catch (IllegalAccessException | InvocationTargetException e) {
        throw new AssertionError(path + ": " + getter, e);
      }
      if (extra) {
        if (value instanceof Map<?, ?> m && !m.isEmpty()) {
          found.add(path + ": " + m.keySet());
        }
      } else {
        collectAdditionalProperties(value, path + "." + property.value(), found);
      }
    }
  }

  private static <T extends HasMetadata> List<T> all(Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
  }

  private static <T extends HasMetadata> T only(Class<T> type) {
    List<T> found = all(type);
    assertEquals(1, found.size(), "exactly one " + type.getSimpleName() + " in " + K8S);
    return found.get(0);
  }

  private static Service service(String name) {
    return all(Service.class).stream()
        .filter(s -> s.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no Service named " + name));
  }

  private static int listenPort(String transport) {
    String key = "shoal.listen." + transport;
    return Addresses.parse(shoalConf.getString(key), 53, key).getPort();
  }

  private static ContainerPort namedPort(String name) {
    return container.getPorts().stream()
        .filter(p -> name.equals(p.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port named " + name));
  }

  private static ContainerPort containerPort(String protocol, int port) {
    return container.getPorts().stream()
        .filter(p -> p.getContainerPort() == port && protocol.equals(p.getProtocol()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port " + port + "/" + protocol));
  }

  /** A probe's or Service's target port as a number, following a port name to the container. */
  private static int resolve(IntOrString port) {
    return port.getIntVal() != null ? port.getIntVal() : namedPort(port.getStrVal()).getContainerPort();
  }

  private static VolumeMount mount(String path) {
    return container.getVolumeMounts().stream()
        .filter(m -> m.getMountPath().equals(path))
        .findFirst()
        .orElseThrow(() -> new AssertionError("nothing mounted at " + path));
  }

  private static EnvVar env(String name) {
    return container.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no env " + name));
  }

  /** An equality-based label selector such as {@code app=shoal,tier=dns}. */
  private static Map<String, String> parseSelector(String selector) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String term : selector.split(",")) {
      String[] kv = term.trim().split("=", 2);
      if (kv.length != 2 || kv[0].endsWith("!")) {
        fail("only key=value selectors are supported here: " + selector);
      }
      labels.put(kv[0].trim(), kv[1].trim());
    }
    return labels;
  }

  private static Map<String, String> matchLabelsOnly(LabelSelector selector) {
    assertTrue(selector.getMatchExpressions() == null || selector.getMatchExpressions().isEmpty(),
        "matchLabels only");
    return selector.getMatchLabels();
  }

  private static void assertContains(Map<String, String> labels, Map<String, String> required, String what) {
    assertNotNull(labels, what);
    assertFalse(required.isEmpty(), what);
    required.forEach((k, v) -> assertEquals(v, labels.get(k), what + ": label " + k));
  }

  private static String pomProperty(String name) throws Exception {
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
    List<String> values = texts(pom, "/project/properties/" + name);
    assertEquals(1, values.size(), "pom.xml property " + name);
    return values.get(0);
  }

  private static List<String> texts(Document doc, String xpath) throws Exception {
    NodeList nodes = (NodeList) XPathFactory.newInstance().newXPath().evaluate(xpath, doc, XPathConstants.NODESET);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      out.add(nodes.item(i).getTextContent().trim());
    }
    return out;
  }
}
