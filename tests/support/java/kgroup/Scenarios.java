package kgroup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Scenarios runs Kafka's Java clients against one bootstrap address and prints what happened as
 * one JSON object on stdout, so that the same scenario on two brokers (kgroup's and Apache
 * Kafka's) can be compared once ids, times and host names are normalised.
 *
 * <p>{@code java kgroup.Scenarios <scenario> <bootstrap> [key=value ...]}, scenarios:
 *
 * <ul>
 *   <li>{@code produce}: an idempotent producer (acks=all) writes keyed records; each is
 *       acknowledged once, in order per partition, and read back as written.
 *   <li>{@code group}: a consumer group (assignor=range|roundrobin|cooperative-sticky) whose
 *       members are JVMs of their own (the {@code member} scenario), joining, closing and killed
 *       with SIGKILL, committing synchronously: every record consumed once, each partition owned
 *       by one member at a time.
 *   <li>{@code together}: members started at once, as the initial rebalance delay expects.
 *   <li>{@code static}: static members (group.instance.id) restarted within the session
 *       timeout: the others see no rebalance, each gets its partitions back.
 *   <li>{@code admin}: the Admin client over topics, the cluster, groups, committed offsets,
 *       configs and offsets by timestamp.
 *   <li>{@code consumer}: a KIP-848 group (group.protocol=consumer): members join and leave,
 *       a static member comes back, the group as Admin describes it after each step.
 * </ul>
 *
 * <p>Failures of the program itself (a wait that times out) exit with status 2 and a message on
 * stderr; what the broker answers, errors included, is part of the result.
 */
public final class Scenarios {
  static final ObjectMapper JSON =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  final String bootstrap;
  final Map<String, String> opts;

  Scenarios(String bootstrap, Map<String, String> opts) {
    this.bootstrap = bootstrap;
    this.opts = opts;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Scenarios s = new Scenarios(args[1], opts);
    JsonNode result;
    try {
      switch (args[0]) {
        case "member":
          s.member();
          return;
        case "warm":
          result = s.warm();
          break;
        case "produce":
          result = s.produce();
          break;
        case "group":
          result = s.group();
          break;
        case "together":
          result = s.together();
          break;
        case "static":
          result = s.staticMembers();
          break;
        case "admin":
          result = s.admin();
          break;
        case "consumer":
          result = s.consumerGroup();
          break;
        case "sasl":
          result = s.sasl();
          break;
        default:
          throw new IllegalArgumentException("unknown scenario " + args[0]);
      }
    } catch (ScenarioFailed e) {
      System.err.println("scenario failed: " + e.getMessage());
      System.out.flush();
      Runtime.getRuntime().halt(2);
      return;
    }
    System.out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(result));
    System.out.flush();
    // Members still running (a failed scenario) must not outlive us: halt, not exit hooks.
    Runtime.getRuntime().halt(0);
  }

  static final class ScenarioFailed extends RuntimeException {
    ScenarioFailed(String message) {
      super(message);
    }
  }

  String opt(String key, String otherwise) {
    return opts.getOrDefault(key, otherwise);
  }

  int intOpt(String key, int otherwise) {
    return Integer.parseInt(opt(key, Integer.toString(otherwise)));
  }

  Properties common() {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    // client.<key>=<value> options are client settings for every client a scenario makes
    // (security.protocol and its ssl.* and sasl.* settings).
    for (Map.Entry<String, String> e : opts.entrySet()) {
      if (e.getKey().startsWith("client.")) {
        p.put(e.getKey().substring("client.".length()), e.getValue());
      }
    }
    return p;
  }

  /**
   * sasl: the clients on a SASL listener (settings in "client.*" options). The admin describes
   * the cluster first: a failure to authenticate ends the scenario with its exception's class
   * and message. Then "rounds" rounds of "records" records are produced, "pause.ms" apart (a
   * session that outlives connections.max.reauth.ms re-authenticates between them), and read
   * back by a consumer group.
   */
  JsonNode sasl() throws Exception {
    ObjectNode out = JSON.createObjectNode();
    String topic = opt("topic", "sasl");
    int rounds = intOpt("rounds", 1);
    int n = intOpt("records", 10);
    long pause = Long.parseLong(opt("pause.ms", "0"));
    Properties quick = new Properties();
    quick.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
    try (Admin admin = admin(quick)) {
      admin.describeCluster().nodes().get(15, TimeUnit.SECONDS);
      createTopic(admin, topic, 1);
    } catch (Exception e) {
      Throwable cause = e;
      while (cause.getCause() != null && cause instanceof ExecutionException) {
        cause = cause.getCause();
      }
      out.put("error", cause.getClass().getSimpleName());
      out.put("message", cause.getMessage());
      return out;
    }
    int produced = 0;
    try (KafkaProducer<String, String> producer = producer()) {
      for (int r = 0; r < rounds; r++) {
        if (r > 0) {
          Thread.sleep(pause);
        }
        for (int i = 0; i < n; i++) {
          producer.send(new ProducerRecord<>(topic, "k", "v" + (r * n + i))).get(30, TimeUnit.SECONDS);
          produced++;
        }
      }
    }
    Properties c = common();
    c.put(ConsumerConfig.GROUP_ID_CONFIG, "sasl-" + topic);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    int consumed = 0;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + 30_000;
      while (consumed < produced && System.currentTimeMillis() < deadline) {
        consumed += consumer.poll(Duration.ofMillis(200)).count();
      }
    }
    out.put("produced", produced);
    out.put("consumed", consumed);
    return out;
  }

  Admin admin(Properties extra) {
    Properties p = common();
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    p.putAll(extra);
    return Admin.create(p);
  }

  KafkaProducer<String, String> producer() {
    Properties p = common();
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
    p.put(ProducerConfig.LINGER_MS_CONFIG, opt("linger.ms", "5"));
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, opt("batch.size", "16384"));
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, opt("max.block.ms", "60000"));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }

  static String errorName(Throwable e) {
    while ((e instanceof ExecutionException || e instanceof java.util.concurrent.CompletionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e.getClass().getSimpleName();
  }

  static void waitFor(BooleanSupplier done, long timeoutMs, String what) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!done.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new ScenarioFailed("timed out after " + timeoutMs + " ms waiting for " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        throw new ScenarioFailed("interrupted waiting for " + what);
      }
    }
  }

  void createTopic(Admin admin, String topic, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    waitFor(
        () -> {
          try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            return d.partitions().size() == partitions
                && d.partitions().stream().allMatch(p -> p.leader() != null);
          } catch (Exception e) {
            return false;
          }
        },
        30_000,
        "the leaders of " + topic);
  }

  /**
   * warm: load what the scenarios load (the clients, JSON) against an address nobody answers,
   * for the class-data archive that the helper dumps once so that each JVM starts faster.
   */
  JsonNode warm() throws Exception {
    Properties none = new Properties();
    none.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "200");
    none.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "100");
    try (Admin a = admin(none)) {
      a.describeCluster().nodes().get();
    } catch (ExecutionException e) {
      // Nobody answers: expected.
    }
    try (KafkaProducer<String, String> p = producer()) {
      p.partitionsFor("warm");
    } catch (Exception e) {
      // Nobody answers: expected.
    }
    Properties p = common();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "warm");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass("cooperative-sticky"));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
      c.subscribe(List.of("warm"));
      c.poll(Duration.ofMillis(100));
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("warm", true);
    JSON.readTree(JSON.writeValueAsString(out));
    return out;
  }

  // ---------------------------------------------------------------------------------- produce

  /** produce: records=N partitions=P keys=K topic=T. */
  JsonNode produce() throws Exception {
    String topic = opt("topic", "produce");
    int n = intOpt("records", 5000);
    int partitions = intOpt("partitions", 3);
    int keys = intOpt("keys", 50);
    try (Admin admin = admin(new Properties())) {
      createTopic(admin, topic, partitions);
    }
    long base = System.currentTimeMillis() - 60_000;
    List<Future<RecordMetadata>> futures = new ArrayList<>();
    int[] callbacks = new int[n];
    List<String> errors = new ArrayList<>();
    // Per partition, the record indexes in the order their acknowledgements came back.
    Map<Integer, List<long[]>> acked = new TreeMap<>();
    try (KafkaProducer<String, String> producer = producer()) {
      for (int i = 0; i < n; i++) {
        final int index = i;
        ProducerRecord<String, String> r =
            new ProducerRecord<>(topic, null, base + i, "key-" + (i % keys), "value-" + i);
        futures.add(
            producer.send(
                r,
                (md, e) -> {
                  synchronized (acked) {
                    callbacks[index]++;
                    if (e != null) {
                      errors.add(errorName(e));
                    } else {
                      acked
                          .computeIfAbsent(md.partition(), k -> new ArrayList<>())
                          .add(new long[] {index, md.offset()});
                    }
                  }
                }));
      }
      producer.flush();
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("records", n);
    out.put("errors", JSON.valueToTree(errors));
    int once = 0;
    for (int c : callbacks) {
      once += c == 1 ? 1 : 0;
    }
    out.put("acknowledged_once", once);
    boolean inOrder = true;
    boolean contiguous = true;
    ObjectNode counts = out.putObject("per_partition");
    Map<Integer, List<Integer>> sentOrder = new TreeMap<>();
    for (Map.Entry<Integer, List<long[]>> e : acked.entrySet()) {
      List<long[]> acks = e.getValue();
      counts.put(Integer.toString(e.getKey()), acks.size());
      List<Integer> order = new ArrayList<>();
      for (int j = 0; j < acks.size(); j++) {
        long[] a = acks.get(j);
        if (j > 0 && acks.get(j - 1)[0] >= a[0]) {
          inOrder = false;
        }
        if (a[1] != j) {
          contiguous = false;
        }
        order.add((int) a[0]);
      }
      sentOrder.put(e.getKey(), order);
    }
    out.put("acknowledged_in_send_order", inOrder);
    out.put("offsets_contiguous_from_zero", contiguous);
    // Read everything back: each partition holds its records in send order, as sent.
    Properties p = common();
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    boolean readBackEqual = true;
    int readBack = 0;
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int i = 0; i < partitions; i++) {
        tps.add(new TopicPartition(topic, i));
      }
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = c.endOffsets(tps);
      Map<Integer, List<ConsumerRecord<String, String>>> got = new TreeMap<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (tps.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))
          && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          got.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r);
        }
      }
      ObjectNode endsOut = out.putObject("end_offsets");
      for (TopicPartition tp : tps) {
        endsOut.put(Integer.toString(tp.partition()), ends.get(tp));
        List<Integer> sent = sentOrder.getOrDefault(tp.partition(), List.of());
        List<ConsumerRecord<String, String>> rs = got.getOrDefault(tp.partition(), List.of());
        readBack += rs.size();
        if (rs.size() != sent.size()) {
          readBackEqual = false;
          continue;
        }
        for (int j = 0; j < rs.size(); j++) {
          ConsumerRecord<String, String> r = rs.get(j);
          int i = sent.get(j);
          if (r.offset() != j
              || !r.key().equals("key-" + (i % keys))
              || !r.value().equals("value-" + i)
              || r.timestamp() != base + i) {
            readBackEqual = false;
          }
        }
      }
    }
    out.put("read_back", readBack);
    out.put("read_back_as_sent", readBackEqual);
    return out;
  }

  // ----------------------------------------------------------------------------------- member

  /** One group member, in a JVM of its own: events on stdout, commands ("close") on stdin. */
  void member() throws Exception {
    String label = opt("label", "m");
    Properties p = common();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, opt("group", "g"));
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, label);
    if (opt("protocol", "classic").equals("consumer")) {
      // KIP-848: the broker owns the session, the heartbeat interval and the assignor; the
      // client refuses session.timeout.ms, heartbeat.interval.ms and
      // partition.assignment.strategy, and may only name a server-side assignor.
      p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
      if (opts.containsKey("remote.assignor")) {
        p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, opt("remote.assignor", ""));
      }
    } else {
      p.put(
          ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
          assignorClass(opt("assignor", "range")));
      p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, opt("session", "6000"));
      p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, opt("heartbeat", "500"));
    }
    p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, opt("max.poll", "20000"));
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    if (opts.containsKey("instance")) {
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, opt("instance", ""));
    }
    Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
    final boolean[] closing = {false};
    Thread stdin =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  if (line.trim().equals("close")) {
                    break;
                  }
                }
              } catch (IOException e) {
                // The orchestrator went away: close as if told to.
              }
              synchronized (closing) {
                closing[0] = true;
              }
            });
    stdin.setDaemon(true);
    stdin.start();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
      Set<Integer> owned = new TreeSet<>();
      c.subscribe(
          List.of(opt("topic", "t")),
          new ConsumerRebalanceListener() {
            void event(String ev, Collection<TopicPartition> parts) {
              for (TopicPartition tp : parts) {
                if (ev.equals("assigned")) {
                  owned.add(tp.partition());
                } else {
                  owned.remove(tp.partition());
                }
              }
              ObjectNode e = JSON.createObjectNode();
              e.put("ev", ev);
              e.put("t", System.nanoTime());
              e.put("gen", c.groupMetadata().generationId());
              e.put("member", c.groupMetadata().memberId());
              ArrayNode ps = e.putArray("parts");
              parts.stream().map(TopicPartition::partition).sorted().forEach(ps::add);
              ArrayNode os = e.putArray("owned");
              owned.forEach(os::add);
              emit(out, e);
            }

            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> parts) {
              event("revoked", parts);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> parts) {
              event("assigned", parts);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> parts) {
              event("lost", parts);
            }
          });
      while (true) {
        synchronized (closing) {
          if (closing[0]) {
            break;
          }
        }
        ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(100));
        if (rs.isEmpty()) {
          continue;
        }
        ObjectNode delivered = JSON.createObjectNode();
        delivered.put("ev", "delivered");
        ArrayNode recs = delivered.putArray("recs");
        for (ConsumerRecord<String, String> r : rs) {
          recs.addArray().add(r.partition()).add(r.offset()).add(r.value());
        }
        emit(out, delivered);
        ObjectNode committed = JSON.createObjectNode();
        try {
          c.commitSync();
          committed.put("ev", "committed");
        } catch (Exception e) {
          committed.put("ev", "commit_failed");
          committed.put("error", errorName(e));
        }
        committed.set("recs", recs);
        emit(out, committed);
      }
    }
    ObjectNode closed = JSON.createObjectNode();
    closed.put("ev", "closed");
    emit(out, closed);
    out.flush();
    Runtime.getRuntime().halt(0);
  }

  static void emit(Writer out, ObjectNode e) {
    try {
      synchronized (out) {
        out.write(JSON.writeValueAsString(e));
        out.write('\n');
        out.flush();
      }
    } catch (IOException x) {
      throw new RuntimeException(x);
    }
  }

  static String assignorClass(String name) {
    switch (name) {
      case "range":
        return "org.apache.kafka.clients.consumer.RangeAssignor";
      case "roundrobin":
        return "org.apache.kafka.clients.consumer.RoundRobinAssignor";
      case "sticky":
        return "org.apache.kafka.clients.consumer.StickyAssignor";
      case "cooperative-sticky":
        return "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
      default:
        throw new IllegalArgumentException("unknown assignor " + name);
    }
  }

  /** Close members at once (each JVM takes a while to stop). */
  void closeAll(Collection<Member> ms) throws Exception {
    for (Member m : ms) {
      m.requestClose();
    }
    for (Member m : ms) {
      m.close();
    }
  }

  /** Member is the orchestrator's view of one member process, fed by its stdout. */
  final class Member {
    final String label;
    final Process proc;
    final Thread reader;
    final List<JsonNode> events = new ArrayList<>();
    final Set<Integer> owned = new TreeSet<>();
    int generation = -1;
    boolean closed;
    boolean killed;
    long endedAt = -1;

    Member(String label, Map<String, String> extra) throws IOException {
      this.label = label;
      List<String> cmd = new ArrayList<>();
      cmd.add(ProcessHandle.current().info().command().orElse("java"));
      for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (!arg.startsWith("-agentlib")) {
          cmd.add(arg);
        }
      }
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add(Scenarios.class.getName());
      cmd.add("member");
      cmd.add(bootstrap);
      Map<String, String> o = new LinkedHashMap<>(opts);
      o.putAll(extra);
      o.put("label", label);
      for (Map.Entry<String, String> e : o.entrySet()) {
        cmd.add(e.getKey() + "=" + e.getValue());
      }
      proc =
          new ProcessBuilder(cmd)
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .redirectInput(ProcessBuilder.Redirect.PIPE)
              .start();
      reader =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(
                        new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = in.readLine()) != null) {
                    JsonNode e = JSON.readTree(line);
                    synchronized (Scenarios.this) {
                      onEvent(this, e);
                    }
                  }
                } catch (IOException e) {
                  // The process died: kill -9 or the end.
                }
              });
      reader.setDaemon(true);
      reader.start();
    }

    /** Tell the member to close (once: it may be gone already after the first). */
    void requestClose() {
      if (closeRequested) {
        return;
      }
      closeRequested = true;
      try {
        proc.getOutputStream().write("close\n".getBytes(StandardCharsets.UTF_8));
        proc.getOutputStream().flush();
      } catch (IOException e) {
        // Already exiting.
      }
    }

    boolean closeRequested;

    void close() throws Exception {
      requestClose();
      if (!proc.waitFor(30, TimeUnit.SECONDS)) {
        throw new ScenarioFailed(label + " did not close in 30 s");
      }
      reader.join(5000);
      synchronized (Scenarios.this) {
        if (!closed) {
          throw new ScenarioFailed(label + " exited without closing");
        }
      }
    }

    void kill9() throws Exception {
      long t = System.nanoTime();
      proc.destroyForcibly(); // SIGKILL
      proc.waitFor(10, TimeUnit.SECONDS);
      reader.join(5000);
      synchronized (Scenarios.this) {
        killed = true;
        endedAt = t;
        // Its partitions are its own until the kill; the others may take them after.
        closeIntervals(this, t);
      }
    }
  }

  final Map<String, Member> members = new LinkedHashMap<>();
  // (partition, offset) -> how often delivered / committed, and by whom.
  final Map<String, Integer> delivered = new HashMap<>();
  final Map<String, String> committedBy = new HashMap<>();
  final List<String> committedTwice = new ArrayList<>();
  final Map<Integer, Long> lastCommittedOffset = new HashMap<>();
  int outOfOrder;
  final List<String> commitFailures = new ArrayList<>();
  // Ownership intervals: partition -> list of [start, end, member] (end -1: open).
  final Map<Integer, List<Object[]>> intervals = new TreeMap<>();
  final List<String> problems = new ArrayList<>();
  final List<ObjectNode> rebalanceLog = new ArrayList<>();

  synchronized void onEvent(Member m, JsonNode e) {
    m.events.add(e);
    String ev = e.get("ev").asText();
    switch (ev) {
      case "assigned":
      case "revoked":
      case "lost":
        {
          long t = e.get("t").asLong();
          m.generation = e.get("gen").asInt();
          Set<Integer> parts = new TreeSet<>();
          e.get("parts").forEach(x -> parts.add(x.asInt()));
          // Whether two members owned a partition at once is judged at the end, on the events'
          // own times: members' events reach us through separate pipes, in no set order.
          if (ev.equals("assigned")) {
            for (int part : parts) {
              intervals.computeIfAbsent(part, k -> new ArrayList<>()).add(new Object[] {t, -1L, m});
            }
            m.owned.addAll(parts);
          } else {
            for (int part : parts) {
              for (Object[] iv : intervals.getOrDefault(part, List.of())) {
                if ((long) iv[1] == -1 && iv[2] == m) {
                  iv[1] = t;
                }
              }
            }
            m.owned.removeAll(parts);
          }
          // An empty callback moves nothing; whether a cooperative member that joins gets one
          // (its SyncGroup answered before the others' next JoinGroup) or not is a race.
          if (parts.isEmpty()) {
            break;
          }
          ObjectNode log = JSON.createObjectNode();
          log.put("member", m.label);
          log.put("ev", ev);
          log.put("gen", e.get("gen").asInt());
          log.set("parts", e.get("parts"));
          rebalanceLog.add(log);
          break;
        }
      case "delivered":
        for (JsonNode r : e.get("recs")) {
          delivered.merge(r.get(0).asInt() + "@" + r.get(1).asLong(), 1, Integer::sum);
        }
        break;
      case "committed":
        for (JsonNode r : e.get("recs")) {
          int part = r.get(0).asInt();
          long off = r.get(1).asLong();
          String key = part + "@" + off;
          if (committedBy.put(key, m.label) != null) {
            committedTwice.add(key);
          }
          Long last = lastCommittedOffset.put(part, off);
          if (last != null && last >= off) {
            outOfOrder++;
          }
          if (!m.owned.contains(part)) {
            problems.add(m.label + " consumed " + key + " without owning it");
          }
        }
        break;
      case "commit_failed":
        commitFailures.add(m.label + ":" + e.get("error").asText());
        break;
      case "closed":
        m.closed = true;
        m.endedAt = System.nanoTime();
        closeIntervals(m, m.endedAt);
        break;
      default:
        problems.add("unknown event " + e);
    }
  }

  void closeIntervals(Member m, long t) {
    for (List<Object[]> ivs : intervals.values()) {
      for (Object[] iv : ivs) {
        if ((long) iv[1] == -1 && iv[2] == m) {
          iv[1] = t;
        }
      }
    }
    m.owned.clear();
  }

  Member start(String label, Map<String, String> extra) throws IOException {
    Member m = new Member(label, extra);
    synchronized (this) {
      members.put(label, m);
    }
    return m;
  }

  Member start(String label) throws IOException {
    return start(label, Map.of());
  }

  /** The live members' partitions: each partition owned by one of them, with the given sizes. */
  synchronized boolean balanced(int partitions, List<Member> live, List<Integer> sizes) {
    List<Integer> got = new ArrayList<>();
    Set<Integer> all = new TreeSet<>();
    int total = 0;
    for (Member m : live) {
      got.add(m.owned.size());
      all.addAll(m.owned);
      total += m.owned.size();
    }
    got.sort(null);
    List<Integer> want = new ArrayList<>(sizes);
    want.sort(null);
    return all.size() == partitions && total == partitions && got.equals(want);
  }

  synchronized ObjectNode assignment(List<Member> live) {
    ObjectNode a = JSON.createObjectNode();
    for (Member m : live) {
      ArrayNode ps = a.putArray(m.label);
      m.owned.forEach(ps::add);
    }
    return a;
  }

  int produced;

  /** Produce ``per`` records to each partition, values naming the phase. */
  void produce(String topic, int partitions, int per, String phase) throws Exception {
    if (phaseProducer == null) {
      phaseProducer = producer();
    }
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (int i = 0; i < per * partitions; i++) {
      sent.add(
          phaseProducer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, phase + "-" + i)));
    }
    phaseProducer.flush();
    for (Future<RecordMetadata> f : sent) {
      f.get();
    }
    produced += per * partitions;
  }

  /** One producer for every phase of a scenario (each new one costs a metadata round). */
  KafkaProducer<String, String> phaseProducer;

  final long started = System.nanoTime();

  void mark(String what) {
    if (opts.containsKey("timings")) {
      System.err.printf("[%6d ms] %s%n", (System.nanoTime() - started) / 1_000_000, what);
    }
  }

  void waitConsumed(long timeoutMs) {
    waitFor(
        () -> {
          synchronized (this) {
            return committedBy.size() >= produced;
          }
        },
        timeoutMs,
        produced + " records committed");
    mark(produced + " records committed");
  }


  void waitBalanced(int partitions, List<Member> live, List<Integer> sizes, String what) {
    waitFor(() -> balanced(partitions, live, sizes), 60_000, what);
    mark(what);
    // Settled: no member's ownership moves for a moment (a cooperative rebalance comes in two).
    waitFor(
        () -> {
          int before;
          synchronized (this) {
            before = rebalanceLog.size();
          }
          try {
            Thread.sleep(Long.parseLong(opt("settle.ms", "1000")));
          } catch (InterruptedException e) {
            return false;
          }
          synchronized (this) {
            return rebalanceLog.size() == before && balanced(partitions, live, sizes);
          }
        },
        60_000,
        what + ", settled");
    mark(what + ", settled");
  }

  ObjectNode groupResult(ArrayNode phases) {
    ObjectNode out = JSON.createObjectNode();
    synchronized (this) {
      out.set("phases", phases);
      out.put("produced", produced);
      out.put("committed", committedBy.size());
      out.put("committed_twice", committedTwice.size());
      int deliveredTwice = 0;
      for (int n : delivered.values()) {
        deliveredTwice += n > 1 ? 1 : 0;
      }
      out.put("delivered_twice", deliveredTwice);
      out.put("committed_out_of_order", outOfOrder);
      out.set("commit_failures", JSON.valueToTree(commitFailures));
      // Ownership intervals of one partition never overlap (a killed member's ends at the kill).
      for (Map.Entry<Integer, List<Object[]>> e : intervals.entrySet()) {
        List<Object[]> ivs = e.getValue();
        for (int i = 0; i < ivs.size(); i++) {
          for (int j = i + 1; j < ivs.size(); j++) {
            Object[] a = ivs.get(i);
            Object[] b = ivs.get(j);
            long aEnd = (long) a[1] == -1 ? Long.MAX_VALUE : (long) a[1];
            long bEnd = (long) b[1] == -1 ? Long.MAX_VALUE : (long) b[1];
            if ((long) a[0] < bEnd && (long) b[0] < aEnd && a[2] != b[2]) {
              problems.add(
                  "partition " + e.getKey() + " owned by " + ((Member) a[2]).label + " and "
                      + ((Member) b[2]).label + " at once");
            }
          }
        }
      }
      out.set("problems", JSON.valueToTree(problems));
      ObjectNode per = out.putObject("committed_per_member");
      Map<String, Integer> counts = new TreeMap<>();
      committedBy.values().forEach(l -> counts.merge(l, 1, Integer::sum));
      counts.forEach(per::put);
      // Members' events interleave as they happen to: by generation, then member, each member's
      // in its own order.
      List<ObjectNode> log = new ArrayList<>(rebalanceLog);
      log.sort(
          java.util.Comparator.comparingInt((ObjectNode e) -> e.get("gen").asInt())
              .thenComparing(e -> e.get("member").asText()));
      out.set("rebalances", JSON.valueToTree(log));
    }
    return out;
  }

  /**
   * group: members A, B and C join one by one, B closes, C is killed (SIGKILL), A closes; the
   * group's assignment after each step, what each member committed, and the checks.
   */
  JsonNode group() throws Exception {
    String topic = opt("topic", "t");
    int partitions = intOpt("partitions", 6);
    int per = intOpt("per", 10);
    try (Admin admin = admin(new Properties())) {
      createTopic(admin, topic, partitions);
    }
    ArrayNode phases = JSON.createArrayNode();
    produce(topic, partitions, per, "p1");
    Member a = start("A");
    waitBalanced(partitions, List.of(a), List.of(partitions), "A alone");
    waitConsumed(60_000);
    phases.addObject().put("step", "A joined").set("assignment", assignment(List.of(a)));

    Member b = start("B");
    waitBalanced(partitions, List.of(a, b), List.of(3, 3), "A and B");
    produce(topic, partitions, per, "p2");
    waitConsumed(60_000);
    phases.addObject().put("step", "B joined").set("assignment", assignment(List.of(a, b)));

    Member c = start("C");
    waitBalanced(partitions, List.of(a, b, c), List.of(2, 2, 2), "A, B and C");
    produce(topic, partitions, per, "p3");
    waitConsumed(60_000);
    phases.addObject().put("step", "C joined").set("assignment", assignment(List.of(a, b, c)));

    b.close();
    waitBalanced(partitions, List.of(a, c), List.of(3, 3), "A and C after B closed");
    produce(topic, partitions, per, "p4");
    waitConsumed(60_000);
    phases.addObject().put("step", "B closed").set("assignment", assignment(List.of(a, c)));

    long killed = System.nanoTime();
    c.kill9();
    waitBalanced(partitions, List.of(a), List.of(partitions), "A alone after C was killed");
    long tookOver = System.nanoTime();
    produce(topic, partitions, per, "p5");
    waitConsumed(60_000);
    ObjectNode killedPhase = phases.addObject();
    killedPhase.put("step", "C killed").set("assignment", assignment(List.of(a)));
    // A takes C's partitions once C's session expires, not before.
    long session = Long.parseLong(opt("session", "6000"));
    killedPhase.put(
        "taken_over_after_session_timeout",
        (tookOver - killed) / 1_000_000 >= session - 1000);

    a.close();
    ObjectNode out = groupResult(phases);
    out.put("assignor", opt("assignor", "range"));
    return out;
  }

  /** together: N members started at once; the generations they were first assigned in. */
  JsonNode together() throws Exception {
    String topic = opt("topic", "t");
    int partitions = intOpt("partitions", 6);
    int n = intOpt("members", 3);
    try (Admin admin = admin(new Properties())) {
      createTopic(admin, topic, partitions);
    }
    produce(topic, partitions, intOpt("per", 10), "p1");
    List<Member> live = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      live.add(start(Character.toString((char) ('A' + i))));
      sizes.add(partitions / n);
    }
    waitBalanced(partitions, live, sizes, n + " members at once");
    waitConsumed(60_000);
    ArrayNode phases = JSON.createArrayNode();
    phases.addObject().put("step", "joined together").set("assignment", assignment(live));
    closeAll(live);
    ObjectNode out = groupResult(phases);
    // How many rebalances formed the group: each member's assignments, by generation.
    ObjectNode gens = out.putObject("generations");
    synchronized (this) {
      for (Member m : live) {
        ArrayNode g = gens.putArray(m.label);
        for (JsonNode e : m.events) {
          if (e.get("ev").asText().equals("assigned")) {
            g.add(e.get("gen").asInt());
          }
        }
      }
    }
    return out;
  }

  /**
   * static: members A, B, C with group.instance.id; B closes and comes back, C is killed and
   * comes back, then A (the leader) is killed and comes back, each within the session timeout:
   * no other member sees a rebalance, each gets its partitions back, the generation stays.
   */
  JsonNode staticMembers() throws Exception {
    String topic = opt("topic", "t");
    int partitions = intOpt("partitions", 6);
    int per = intOpt("per", 10);
    try (Admin admin = admin(new Properties())) {
      createTopic(admin, topic, partitions);
    }
    produce(topic, partitions, per, "p1");
    // A restarted JVM must be back within the session, however loaded the machine: 30 s (the
    // others never wait for it, so the length costs nothing).
    opts.putIfAbsent("session", "30000");
    Map<String, Member> live = new LinkedHashMap<>();
    for (String label : List.of("A", "B", "C")) {
      live.put(label, start(label, Map.of("instance", "instance-" + label)));
    }
    waitBalanced(partitions, new ArrayList<>(live.values()), List.of(2, 2, 2), "A, B and C");
    waitConsumed(60_000);
    ArrayNode phases = JSON.createArrayNode();
    ObjectNode before = assignment(new ArrayList<>(live.values()));
    phases.addObject().put("step", "A, B and C joined").set("assignment", before);
    int generation;
    int eventsBefore;
    synchronized (this) {
      generation = live.get("A").generation;
      eventsBefore = rebalanceLog.size();
    }
    ObjectNode out = JSON.createObjectNode();
    ArrayNode restarts = out.putArray("restarts");
    String[][] plan = {{"B", "close"}, {"C", "kill"}, {"A", "kill"}};
    Map<String, Member> back = new LinkedHashMap<>();
    int round = 0;
    for (String[] step : plan) {
      round++;
      String label = step[0];
      Member old = live.get(label);
      if (step[1].equals("close")) {
        old.close();
      } else {
        old.kill9();
      }
      Member again = start(label + round, Map.of("instance", "instance-" + label));
      live.put(label, again);
      back.put(label, again);
      waitFor(
          () -> {
            synchronized (this) {
              return !again.owned.isEmpty();
            }
          },
          60_000,
          label + " back");
      mark(label + " back");
    }
    // What was written while they were away, and after, is read once, from where each left it.
    produce(topic, partitions, per, "p2");
    waitConsumed(60_000);
    // A moment for a rebalance, were one coming, to show.
    Thread.sleep(1000);
    synchronized (this) {
      int others = 0;
      for (ObjectNode e : rebalanceLog.subList(eventsBefore, rebalanceLog.size())) {
        // The restarted members' own first assignment is expected; any other event is not.
        String member = e.get("member").asText();
        boolean ownReturn = member.length() > 1 && e.get("ev").asText().equals("assigned");
        // A closing member gives its partitions up (to no one: the instance keeps them).
        boolean closing = members.get(member).closed;
        if (!ownReturn && !closing) {
          others++;
        }
      }
      out.put("rebalance_events_after_restarts", others);
      for (String[] step : plan) {
        Member m = back.get(step[0]);
        ObjectNode r = restarts.addObject();
        r.put("member", step[0]);
        r.put("how", step[1]);
        r.put("same_partitions_back", m.owned.equals(new TreeSet<>(toList(before.get(step[0])))));
        r.put("same_generation", m.generation == generation);
        int assignedEvents = 0;
        for (JsonNode e : m.events) {
          assignedEvents += e.get("ev").asText().equals("assigned") ? 1 : 0;
        }
        r.put("assigned_events", assignedEvents);
      }
    }
    phases.addObject().put("step", "after restarts").set("assignment", assignmentByInstance(live));
    closeAll(live.values());
    ObjectNode g = groupResult(phases);
    // Three members started at once form the group in one or more rebalances, as they happen
    // to arrive: only what follows is compared.
    g.remove("committed_per_member");
    g.remove("rebalances");
    out.setAll(g);
    return out;
  }

  synchronized ObjectNode assignmentByInstance(Map<String, Member> live) {
    ObjectNode a = JSON.createObjectNode();
    for (Map.Entry<String, Member> e : live.entrySet()) {
      ArrayNode ps = a.putArray(e.getKey());
      e.getValue().owned.forEach(ps::add);
    }
    return a;
  }

  static List<Integer> toList(JsonNode array) {
    List<Integer> l = new ArrayList<>();
    array.forEach(x -> l.add(x.asInt()));
    return l;
  }

  // --------------------------------------------------------------------------------- consumer

  /**
   * The group as Admin describes it (ConsumerGroupDescribe for a consumer group): state, epochs,
   * assignor, and each member by client id (member ids are random) with its epoch, its current
   * and target partitions.
   */
  ObjectNode describeConsumerGroup(Admin admin, String group) throws Exception {
    ConsumerGroupDescription d =
        admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get();
    ObjectNode g = JSON.createObjectNode();
    g.put("state", String.valueOf(d.groupState()));
    g.put("type", String.valueOf(d.type()));
    g.put("assignor", d.partitionAssignor());
    g.put("group_epoch", d.groupEpoch().orElse(null));
    g.put("target_assignment_epoch", d.targetAssignmentEpoch().orElse(null));
    ObjectNode ms = g.putObject("members");
    List<MemberDescription> sorted = new ArrayList<>(d.members());
    sorted.sort(java.util.Comparator.comparing(MemberDescription::clientId));
    for (MemberDescription md : sorted) {
      ObjectNode m = ms.putObject(md.clientId());
      m.put("instance", md.groupInstanceId().orElse(null));
      m.put("member_epoch", md.memberEpoch().orElse(null));
      m.put("upgraded", md.upgraded().orElse(null));
      m.set("assignment", partitions(md.assignment().topicPartitions()));
      m.set(
          "target_assignment",
          md.targetAssignment().map(t -> (JsonNode) partitions(t.topicPartitions())).orElse(null));
    }
    return g;
  }

  static ArrayNode partitions(Collection<TopicPartition> tps) {
    ArrayNode a = JSON.createArrayNode();
    tps.stream().map(TopicPartition::partition).sorted().forEach(a::add);
    return a;
  }

  /**
   * The group described once it has settled: Stable, and every member (but a static one away,
   * epoch -2) at the group's epoch with its target partitions.
   */
  ObjectNode describeSettled(Admin admin, String group, String what) {
    ObjectNode[] last = {null};
    waitFor(
        () -> {
          try {
            ObjectNode g = describeConsumerGroup(admin, group);
            last[0] = g;
            if (!g.get("state").asText().equals("Stable")) {
              return false;
            }
            for (JsonNode m : g.get("members")) {
              if (m.get("member_epoch").asInt() == -2) {
                continue;
              }
              if (m.get("member_epoch").asInt() != g.get("group_epoch").asInt()
                  || !m.get("assignment").equals(m.get("target_assignment"))) {
                return false;
              }
            }
            return true;
          } catch (Exception e) {
            return false;
          }
        },
        60_000,
        what + " described Stable (last: " + last[0] + ")");
    mark(what + " described");
    return last[0];
  }

  static void step(ArrayNode described, String step, ObjectNode group) {
    described.addObject().put("step", step).set("group", group);
  }

  static Map<String, Object> committedOffsets(Admin admin, String group) throws Exception {
    return offsets(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
  }

  /** Each member's partition count, sorted: the shape a balanced assignment has. */
  static ArrayNode shape(ObjectNode described) {
    List<Integer> sizes = new ArrayList<>();
    described.get("members").forEach(m -> sizes.add(m.get("assignment").size()));
    sizes.sort(null);
    return JSON.valueToTree(sizes);
  }

  /**
   * consumer: a KIP-848 group (group.protocol=consumer, the broker's assignor): A alone, B joins
   * (A gives up half, B gets it only after), B closes (epoch -1: A gets all back), static S
   * joins, closes (epoch -2) and comes back within the session as S2 (the same partitions, the
   * group epoch unmoved), then everyone leaves and S's session runs out. After each step the
   * group as Admin describes it; at the end the committed offsets, and what Admin calls that a
   * live group refuses answer.
   */
  JsonNode consumerGroup() throws Exception {
    String topic = opt("topic", "t");
    String group = opt("group", "g");
    int partitions = intOpt("partitions", 6);
    int per = intOpt("per", 10);
    opts.put("protocol", "consumer");
    ObjectNode out = JSON.createObjectNode();
    ArrayNode described = out.putArray("described");
    ArrayNode phases = JSON.createArrayNode();
    try (Admin admin = admin(new Properties())) {
      createTopic(admin, topic, partitions);
      produce(topic, partitions, per, "p1");

      Member a = start("A");
      waitBalanced(partitions, List.of(a), List.of(partitions), "A alone");
      waitConsumed(60_000);
      phases.addObject().put("step", "A joined").set("assignment", assignment(List.of(a)));
      step(described, "A joined", describeSettled(admin, group, "A"));

      Member b = start("B");
      int half = partitions / 2;
      waitBalanced(partitions, List.of(a, b), List.of(half, partitions - half), "A and B");
      produce(topic, partitions, per, "p2");
      waitConsumed(60_000);
      phases.addObject().put("step", "B joined").set("assignment", assignment(List.of(a, b)));
      step(described, "B joined", describeSettled(admin, group, "A, B"));

      // What a live consumer group refuses: the admin's own commits and its deletion.
      TopicPartition p0 = new TopicPartition(topic, 0);
      out.set(
          "alter_offsets_while_active",
          call(
              () ->
                  admin
                      .alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(0)))
                      .all()
                      .get()));
      out.set(
          "delete_group_while_active",
          call(() -> admin.deleteConsumerGroups(List.of(group)).all().get()));

      b.close();
      waitBalanced(partitions, List.of(a), List.of(partitions), "A after B closed");
      produce(topic, partitions, per, "p3");
      waitConsumed(60_000);
      phases.addObject().put("step", "B closed").set("assignment", assignment(List.of(a)));
      step(described, "B closed", describeSettled(admin, group, "A after B"));

      Member s = start("S", Map.of("instance", "instance-S"));
      waitBalanced(partitions, List.of(a, s), List.of(half, partitions - half), "A and static S");
      waitConsumed(60_000);
      ObjectNode withS = describeSettled(admin, group, "A and S");
      ObjectNode before = assignment(List.of(a, s));
      phases.addObject().put("step", "S joined").set("assignment", before);
      step(described, "S joined", withS);

      // A static member that closes keeps its place (and partitions) for the session.
      s.close();
      step(described, "S closed", describeConsumerGroup(admin, group));
      int eventsBefore;
      synchronized (this) {
        eventsBefore = rebalanceLog.size();
      }
      Member s2 = start("S2", Map.of("instance", "instance-S"));
      waitFor(
          () -> {
            synchronized (this) {
              return !s2.owned.isEmpty();
            }
          },
          60_000,
          "S back");
      produce(topic, partitions, per, "p4");
      waitConsumed(60_000);
      ObjectNode back = describeSettled(admin, group, "S back");
      step(described, "S back", back);
      ObjectNode restart = out.putObject("static_restart");
      synchronized (this) {
        restart.put(
            "same_partitions_back",
            s2.owned.equals(new TreeSet<>(toList(before.get("S")))));
        restart.put(
            "same_group_epoch",
            back.get("group_epoch").asInt() == withS.get("group_epoch").asInt());
        int others = 0;
        for (ObjectNode e : rebalanceLog.subList(eventsBefore, rebalanceLog.size())) {
          others += e.get("member").asText().equals("S2") ? 0 : 1;
        }
        restart.put("others_rebalanced", others);
      }
      phases.addObject().put("step", "S back").set("assignment", assignment(List.of(a, s2)));

      // Committed offsets as Admin reads them (OffsetFetch): each partition at its end.
      out.set(
          "committed_offsets",
          call(() -> committedOffsets(admin, group)));

      closeAll(List.of(a, s2));
      // S2 left as a static member (epoch -2): the group empties when its session runs out.
      ObjectNode[] last = {null};
      waitFor(
          () -> {
            try {
              last[0] = describeConsumerGroup(admin, group);
              return last[0].get("state").asText().equals("Empty");
            } catch (Exception e) {
              return false;
            }
          },
          60_000,
          "the group Empty");
      step(described, "all left", last[0]);
      out.set(
          "committed_offsets_after",
          call(() -> committedOffsets(admin, group)));
      out.set(
          "delete_empty_group",
          call(() -> admin.deleteConsumerGroups(List.of(group)).all().get()));
    }
    ObjectNode g = groupResult(phases);
    out.setAll(g);
    ArrayNode shapes = out.putArray("shapes");
    described.forEach(d -> shapes.add(shape((ObjectNode) d.get("group"))));
    return out;
  }

  // ------------------------------------------------------------------------------------ admin

  interface Step {
    Object run() throws Exception;
  }

  /** One admin call's result, or the name of the exception it failed with. */
  static JsonNode call(Step s) {
    try {
      return JSON.valueToTree(s.run());
    } catch (Exception e) {
      // SCENARIO_DEBUG=1: the stack of each failed call on stderr, to see where it failed.
      if (System.getenv("SCENARIO_DEBUG") != null) {
        e.printStackTrace();
      }
      ObjectNode err = JSON.createObjectNode();
      err.put("error", errorName(e));
      return err;
    }
  }

  static Object describe(TopicDescription d) {
    Map<String, Object> m = new TreeMap<>();
    m.put("name", d.name());
    m.put("internal", d.isInternal());
    m.put("topic_id_set", d.topicId() != null && !d.topicId().toString().isEmpty());
    List<Object> ps = new ArrayList<>();
    for (TopicPartitionInfo p : d.partitions()) {
      Map<String, Object> pm = new TreeMap<>();
      pm.put("partition", p.partition());
      pm.put("leader", p.leader() != null);
      pm.put("replicas", p.replicas().size());
      pm.put("isr", p.isr().size());
      ps.add(pm);
    }
    m.put("partitions", ps);
    return m;
  }

  static Object describe(ConsumerGroupDescription d) {
    Map<String, Object> m = new TreeMap<>();
    m.put("group", d.groupId());
    m.put("simple", d.isSimpleConsumerGroup());
    m.put("state", String.valueOf(d.groupState()));
    m.put("type", String.valueOf(d.type()));
    m.put("assignor", d.partitionAssignor());
    m.put("coordinator", d.coordinator() != null);
    List<Object> members = new ArrayList<>();
    for (MemberDescription md : d.members()) {
      Map<String, Object> mm = new TreeMap<>();
      mm.put("client_id", md.clientId());
      mm.put("member_id_prefix", md.consumerId().startsWith(md.clientId() + "-"));
      mm.put("instance", md.groupInstanceId().orElse(null));
      mm.put("host", md.host().isEmpty() ? "" : "set");
      List<String> parts = new ArrayList<>();
      md.assignment().topicPartitions().forEach(tp -> parts.add(tp.toString()));
      parts.sort(null);
      mm.put("assignment", parts);
      members.add(mm);
    }
    m.put("members", members);
    return m;
  }

  static List<String> operations(Set<org.apache.kafka.common.acl.AclOperation> ops) {
    List<String> names = new ArrayList<>();
    if (ops != null) {
      ops.forEach(o -> names.add(o.toString()));
    }
    names.sort(null);
    return names;
  }

  static Map<String, Object> offsets(Map<TopicPartition, OffsetAndMetadata> o) {
    Map<String, Object> m = new TreeMap<>();
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : o.entrySet()) {
      if (e.getValue() == null) {
        m.put(e.getKey().toString(), null);
        continue;
      }
      Map<String, Object> om = new TreeMap<>();
      om.put("offset", e.getValue().offset());
      om.put("metadata", e.getValue().metadata());
      om.put("leader_epoch_set", e.getValue().leaderEpoch().isPresent());
      m.put(e.getKey().toString(), om);
    }
    return m;
  }

  static Map<String, Object> listed(ListOffsetsResult r, String topic, int partitions)
      throws Exception {
    Map<String, Object> m = new TreeMap<>();
    for (int i = 0; i < partitions; i++) {
      TopicPartition tp = new TopicPartition(topic, i);
      try {
        ListOffsetsResult.ListOffsetsResultInfo info = r.partitionResult(tp).get();
        m.put(Integer.toString(i), List.of(info.offset(), info.timestamp()));
      } catch (ExecutionException e) {
        m.put(Integer.toString(i), errorName(e));
      }
    }
    return m;
  }

  static Map<String, Object> configs(Config c, Collection<String> keys) {
    Map<String, Object> m = new TreeMap<>();
    for (String k : keys) {
      ConfigEntry e = c.get(k);
      if (e == null) {
        m.put(k, null);
        continue;
      }
      Map<String, Object> em = new TreeMap<>();
      em.put("value", e.value());
      em.put("source", e.source().toString());
      em.put("read_only", e.isReadOnly());
      em.put("sensitive", e.isSensitive());
      em.put("type", e.type().toString());
      m.put(k, em);
    }
    return m;
  }

  /** admin: topics, the cluster, groups, committed offsets, configs, offsets by timestamp. */
  JsonNode admin() throws Exception {
    String topic = opt("topic", "admin-topic");
    String group = opt("group", "admin-group");
    int partitions = 3;
    ObjectNode out = JSON.createObjectNode();
    try (Admin admin = admin(new Properties())) {
      DescribeClusterResult cluster = admin.describeCluster();
      out.set(
          "describe_cluster",
          call(
              () -> {
                Map<String, Object> m = new TreeMap<>();
                m.put("nodes", cluster.nodes().get().size());
                m.put("cluster_id_set", cluster.clusterId().get() != null);
                m.put("controller_set", cluster.controller().get() != null);
                int controller = cluster.controller().get().id();
                m.put(
                    "controller_is_a_node",
                    cluster.nodes().get().stream().anyMatch(n -> n.id() == controller));
                return m;
              }));

      NewTopic nt =
          new NewTopic(topic, partitions, (short) 1)
              .configs(Map.of("retention.ms", "3600000", "cleanup.policy", "delete"));
      out.set(
          "create_validate_only",
          call(
              () -> {
                admin.createTopics(List.of(nt), new CreateTopicsOptions().validateOnly(true)).all().get();
                return "ok";
              }));
      out.set(
          "describe_after_validate_only",
          call(() -> describe(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic))));
      out.set(
          "create",
          call(
              () -> {
                var r = admin.createTopics(List.of(nt));
                r.all().get();
                Map<String, Object> m = new TreeMap<>();
                m.put("partitions", r.numPartitions(topic).get());
                m.put("replication", r.replicationFactor(topic).get());
                m.put("topic_id_set", r.topicId(topic).get() != null);
                return m;
              }));
      createTopicWait(admin, topic, partitions);
      out.set(
          "create_again",
          call(() -> {
            admin.createTopics(List.of(nt)).all().get();
            return "ok";
          }));
      out.set(
          "create_zero_partitions",
          call(() -> {
            admin.createTopics(List.of(new NewTopic(topic + "-zero", 0, (short) 1))).all().get();
            return "ok";
          }));
      out.set(
          "create_replication_too_high",
          call(() -> {
            admin.createTopics(List.of(new NewTopic(topic + "-rf", 1, (short) 3))).all().get();
            return "ok";
          }));
      out.set(
          "create_bad_config",
          call(() -> {
            admin
                .createTopics(
                    List.of(
                        new NewTopic(topic + "-cfg", 1, (short) 1)
                            .configs(Map.of("cleanup.policy", "sometimes"))))
                .all()
                .get();
            return "ok";
          }));
      out.set(
          "describe_topic",
          call(() -> describe(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic))));
      out.set(
          "describe_topic_by_id",
          call(
              () -> {
                var id = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
                return describe(
                    admin
                        .describeTopics(org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(id)))
                        .allTopicIds()
                        .get()
                        .get(id));
              }));
      out.set(
          "describe_topic_operations",
          call(
              () ->
                  operations(
                      admin
                          .describeTopics(
                              List.of(topic),
                              new org.apache.kafka.clients.admin.DescribeTopicsOptions()
                                  .includeAuthorizedOperations(true))
                          .allTopicNames()
                          .get()
                          .get(topic)
                          .authorizedOperations())));
      out.set(
          "describe_cluster_operations",
          call(
              () ->
                  operations(
                      admin
                          .describeCluster(
                              new org.apache.kafka.clients.admin.DescribeClusterOptions()
                                  .includeAuthorizedOperations(true))
                          .authorizedOperations()
                          .get())));
      out.set(
          "list_topics_has_it",
          call(() -> admin.listTopics().names().get().contains(topic)));

      // Records with known timestamps: partition p holds 10 records at times base + 10*i + p.
      long base = System.currentTimeMillis() - 3_600_000L;
      try (KafkaProducer<String, String> p = producer()) {
        for (int i = 0; i < 10; i++) {
          for (int part = 0; part < partitions; part++) {
            p.send(new ProducerRecord<>(topic, part, base + 10L * i + part, "k" + i, "v" + i));
          }
        }
        // One record out of time order in partition 0: max-timestamp finds it, not the last.
        p.send(new ProducerRecord<>(topic, 0, base + 1000, "late", "late"));
        p.send(new ProducerRecord<>(topic, 0, base + 95, "k10", "v10"));
        p.flush();
      }
      Map<String, OffsetSpec> specs = new LinkedHashMap<>();
      specs.put("earliest", OffsetSpec.earliest());
      specs.put("latest", OffsetSpec.latest());
      specs.put("max_timestamp", OffsetSpec.maxTimestamp());
      specs.put("at_base", OffsetSpec.forTimestamp(base));
      specs.put("at_base_plus_35", OffsetSpec.forTimestamp(base + 35));
      specs.put("at_base_plus_500", OffsetSpec.forTimestamp(base + 500));
      specs.put("after_everything", OffsetSpec.forTimestamp(base + 5000));
      specs.put("before_everything", OffsetSpec.forTimestamp(base - 5000));
      ObjectNode lo = out.putObject("list_offsets");
      for (Map.Entry<String, OffsetSpec> e : specs.entrySet()) {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
          q.put(new TopicPartition(topic, i), e.getValue());
        }
        // Timestamps relative to base, so that runs compare.
        JsonNode r = call(() -> listed(admin.listOffsets(q), topic, partitions));
        if (r.isObject()) {
          r.fields()
              .forEachRemaining(
                  f -> {
                    if (f.getValue().isArray()) {
                      long ts = f.getValue().get(1).asLong();
                      ((ArrayNode) f.getValue()).set(1, JSON.valueToTree(ts < 0 ? ts : ts - base));
                    }
                  });
        }
        lo.set(e.getKey(), r);
      }
      out.set(
          "list_offsets_unknown_partition",
          call(
              () -> {
                // Both brokers' metadata never shows it: the Admin retries until its timeout.
                TopicPartition tp = new TopicPartition(topic, 9);
                admin
                    .listOffsets(
                        Map.of(tp, OffsetSpec.latest()),
                        new org.apache.kafka.clients.admin.ListOffsetsOptions().timeoutMs(2000))
                    .partitionResult(tp)
                    .get();
                return "ok";
              }));
      out.set(
          "list_offsets_unknown_topic",
          call(
              () ->
                  listed(
                      admin.listOffsets(
                          Map.of(new TopicPartition(topic + "-nope", 0), OffsetSpec.latest())),
                      topic + "-nope",
                      1)));

      // A consumer group with two members' worth of commits, then admin over it.
      Properties cp = common();
      cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
      cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "admin-scenario");
      cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
      cp.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
      cp.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass("roundrobin"));
      cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
        c.subscribe(List.of(topic));
        int seen = 0;
        long deadline = System.currentTimeMillis() + 30_000;
        while (seen < 32 && System.currentTimeMillis() < deadline) {
          seen += c.poll(Duration.ofMillis(200)).count();
        }
        out.put("group_consumed", seen);
        c.commitSync(
            Map.of(
                new TopicPartition(topic, 0), new OffsetAndMetadata(5, "five"),
                new TopicPartition(topic, 1), new OffsetAndMetadata(10, "")));
        out.set(
            "list_groups_active",
            call(
                () -> {
                  Map<String, Object> m = new TreeMap<>();
                  for (GroupListing g : admin.listGroups().all().get()) {
                    if (g.groupId().equals(group)) {
                      m.put("type", String.valueOf(g.type().orElse(null)));
                      m.put("protocol", g.protocol());
                      m.put("state", String.valueOf(g.groupState().orElse(null)));
                      m.put("simple", g.isSimpleConsumerGroup());
                    }
                  }
                  return m;
                }));
        out.set(
            "list_consumer_groups_stable",
            call(
                () -> {
                  List<String> ids = new ArrayList<>();
                  for (GroupListing g :
                      admin
                          .listGroups(
                              ListGroupsOptions.forConsumerGroups()
                                  .inGroupStates(Set.of(org.apache.kafka.common.GroupState.STABLE)))
                          .all()
                          .get()) {
                    ids.add(g.groupId().equals(group) ? "ours" : "other");
                  }
                  ids.sort(null);
                  return ids;
                }));
        out.set(
            "describe_group_active",
            call(() -> describe(admin.describeConsumerGroups(List.of(group)).all().get().get(group))));
        out.set(
            "describe_group_operations",
            call(
                () ->
                    operations(
                        admin
                            .describeConsumerGroups(
                                List.of(group),
                                new org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions()
                                    .includeAuthorizedOperations(true))
                            .all()
                            .get()
                            .get(group)
                            .authorizedOperations())));
        out.set(
            "list_offsets_active",
            call(() -> committedOffsets(admin, group)));
        out.set(
            "alter_offsets_while_active",
            call(() -> {
              admin
                  .alterConsumerGroupOffsets(
                      group, Map.of(new TopicPartition(topic, 2), new OffsetAndMetadata(3)))
                  .all()
                  .get();
              return "ok";
            }));
        out.set(
            "delete_offsets_of_subscribed_topic",
            call(() -> {
              admin.deleteConsumerGroupOffsets(group, Set.of(new TopicPartition(topic, 0))).all().get();
              return "ok";
            }));
        out.set(
            "delete_group_while_active",
            call(() -> {
              admin.deleteConsumerGroups(List.of(group)).all().get();
              return "ok";
            }));
      }
      out.set(
          "describe_group_empty",
          call(() -> describe(admin.describeConsumerGroups(List.of(group)).all().get().get(group))));
      out.set(
          "alter_offsets",
          call(() -> {
            admin
                .alterConsumerGroupOffsets(
                    group,
                    Map.of(
                        new TopicPartition(topic, 2), new OffsetAndMetadata(3, "three"),
                        new TopicPartition(topic, 0), new OffsetAndMetadata(7)))
                .all()
                .get();
            return "ok";
          }));
      out.set(
          "alter_offsets_unknown_partition",
          call(() -> {
            admin
                .alterConsumerGroupOffsets(
                    group, Map.of(new TopicPartition(topic, 9), new OffsetAndMetadata(1)))
                .all()
                .get();
            return "ok";
          }));
      out.set(
          "list_offsets_after_alter",
          call(() -> committedOffsets(admin, group)));
      out.set(
          "delete_offsets",
          call(() -> {
            admin.deleteConsumerGroupOffsets(group, Set.of(new TopicPartition(topic, 1))).all().get();
            return "ok";
          }));
      out.set(
          "list_offsets_after_delete",
          call(() -> committedOffsets(admin, group)));
      out.set(
          "list_offsets_unknown_group",
          call(() -> offsets(admin.listConsumerGroupOffsets(group + "-nope").partitionsToOffsetAndMetadata().get())));
      out.set(
          "describe_unknown_group",
          call(() -> describe(admin.describeConsumerGroups(List.of(group + "-nope")).all().get().get(group + "-nope"))));
      out.set(
          "delete_group",
          call(() -> {
            admin.deleteConsumerGroups(List.of(group)).all().get();
            return "ok";
          }));
      out.set(
          "delete_group_again",
          call(() -> {
            admin.deleteConsumerGroups(List.of(group)).all().get();
            return "ok";
          }));
      out.set(
          "list_groups_after_delete",
          call(
              () ->
                  admin.listGroups().all().get().stream().anyMatch(g -> g.groupId().equals(group))));

      // Configs: a topic's (set at creation, altered, defaults) and the broker's.
      ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      List<String> topicKeys =
          List.of(
              "retention.ms",
              "cleanup.policy",
              "segment.bytes",
              "max.message.bytes",
              "min.insync.replicas",
              "message.timestamp.type",
              "compression.type");
      out.set(
          "describe_topic_configs",
          call(() -> configs(admin.describeConfigs(List.of(tr)).all().get().get(tr), topicKeys)));
      out.set(
          "incremental_alter_topic_config",
          call(() -> {
            admin
                .incrementalAlterConfigs(
                    Map.of(
                        tr,
                        List.of(
                            new AlterConfigOp(
                                new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                            new AlterConfigOp(
                                new ConfigEntry("cleanup.policy", ""), AlterConfigOp.OpType.DELETE))))
                .all()
                .get();
            return "ok";
          }));
      out.set(
          "describe_topic_configs_after_alter",
          call(() -> configs(admin.describeConfigs(List.of(tr)).all().get().get(tr), topicKeys)));
      ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, opt("broker.id", "1"));
      out.set(
          "describe_broker_configs",
          call(
              () ->
                  configs(
                      admin.describeConfigs(List.of(br)).all().get().get(br),
                      List.of(
                          "num.partitions",
                          "log.retention.hours",
                          "message.max.bytes",
                          "group.min.session.timeout.ms",
                          "group.max.session.timeout.ms",
                          "offsets.topic.num.partitions"))));
      ConfigResource missing = new ConfigResource(ConfigResource.Type.TOPIC, topic + "-nope");
      out.set(
          "describe_configs_unknown_topic",
          call(() -> configs(admin.describeConfigs(List.of(missing)).all().get().get(missing), List.of("retention.ms"))));

      out.set(
          "delete_topic",
          call(() -> {
            admin.deleteTopics(List.of(topic)).all().get();
            return "ok";
          }));
      waitFor(
          () -> {
            try {
              return !admin.listTopics().names().get().contains(topic);
            } catch (Exception e) {
              return false;
            }
          },
          30_000,
          topic + " gone");
      out.set(
          "describe_deleted_topic",
          call(() -> describe(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic))));
      out.set(
          "delete_deleted_topic",
          call(() -> {
            admin.deleteTopics(List.of(topic)).all().get();
            return "ok";
          }));
    }
    return out;
  }

  void createTopicWait(Admin admin, String topic, int partitions) {
    waitFor(
        () -> {
          try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            return d.partitions().size() == partitions
                && d.partitions().stream().allMatch(p -> p.leader() != null);
          } catch (Exception e) {
            return false;
          }
        },
        30_000,
        "the leaders of " + topic);
  }

  static Set<Integer> set(int... xs) {
    Set<Integer> s = new HashSet<>();
    for (int x : xs) {
      s.add(x);
    }
    return s;
  }
}
