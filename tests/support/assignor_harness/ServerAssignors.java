// ServerAssignors: runs Apache Kafka's own server-side assignors (`range`, `uniform`: the
// group coordinator's RangeAssignor and UniformAssignor) on group specs read as JSON, for
// tests/conformance/test_server_assignors_vs_kafka.py to compare kgroup's with.
//
// Usage: java -cp <this>:<Kafka's jars> ServerAssignors SPECS.json
// SPECS.json is a list of groups:
//   {"type": "Homogeneous" | "Heterogeneous",
//    "topics": [{"id": <Uuid text>, "partitions": n, "racks": [[rack, ...] per partition]}],
//    "members": [{"id": s, "instance": s | null, "rack": s | null, "topics": [<Uuid text>],
//                 "target": [[<Uuid text>, [partition, ...]], ...]}]}
// Each group runs with both assignors in two modes, one JSON line each on stdout:
//   {"group": i, "assignor": name, "mode": m, "order": [member ids as the assignor walked them],
//    "assignment": {member: {topic: [partitions ascending]}}} or, if it failed, "error": message
//    (a PartitionAssignorException's message; any other exception as "Class: message").
// Modes:
//   "ordered": every collection iterates in the order given (members, subscribed topics,
//              target topics and partitions), as kgroup's assignors walk them;
//   "hashed":  hash-ordered collections, as Kafka's coordinator hands its assignors: a HashMap
//              of members (TargetAssignmentBuilder's), HashSets of subscribed topic ids (Kafka's
//              own TopicIds set iterates in its topic names' hash order), HashMaps of target
//              topics to HashSets of partitions.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

public final class ServerAssignors {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Member is one member: its subscription and previous target. */
    private record Member(
        Optional<String> rackId,
        Optional<String> instanceId,
        Set<Uuid> subscribedTopicIds,
        Map<Uuid, Set<Integer>> partitions
    ) implements MemberSubscription, MemberAssignment { }

    /** Spec is a GroupSpec over a map of members, as Kafka's GroupSpecImpl. */
    private record Spec(
        Map<String, Member> members,
        SubscriptionType subscriptionType,
        Map<Uuid, Map<Integer, String>> owners
    ) implements GroupSpec {
        @Override
        public Collection<String> memberIds() {
            return members.keySet();
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            Map<Integer, String> held = owners.get(topicId);
            return held != null && held.containsKey(partitionId);
        }

        @Override
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            return members.get(memberId);
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            Member m = members.get(memberId);
            return m != null ? m : new Member(Optional.empty(), Optional.empty(), Set.of(), Map.of());
        }
    }

    /** Topics describes the topics of one group. */
    private record Topics(Map<Uuid, Integer> counts, Map<Uuid, List<Set<String>>> racks)
        implements SubscribedTopicDescriber {
        @Override
        public int numPartitions(Uuid topicId) {
            return counts.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            List<Set<String>> r = racks.get(topicId);
            return r == null || partition >= r.size() ? Set.of() : r.get(partition);
        }
    }

    public static void main(String[] args) throws Exception {
        JsonNode groups = JSON.readTree(new File(args[0]));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        List<ConsumerGroupPartitionAssignor> assignors = List.of(new RangeAssignor(), new UniformAssignor());
        for (int g = 0; g < groups.size(); g++) {
            JsonNode group = groups.get(g);
            Topics topics = topics(group.get("topics"));
            for (ConsumerGroupPartitionAssignor assignor : assignors) {
                for (String mode : List.of("ordered", "hashed")) {
                    Spec spec = spec(group, mode.equals("hashed"));
                    ObjectNode line = JSON.createObjectNode();
                    line.put("group", g);
                    line.put("assignor", assignor.name());
                    line.put("mode", mode);
                    ArrayNode order = line.putArray("order");
                    spec.memberIds().forEach(order::add);
                    try {
                        line.set("assignment", assignment(assignor.assign(spec, topics)));
                    } catch (PartitionAssignorException e) {
                        line.put("error", e.getMessage());
                    } catch (RuntimeException e) {
                        line.put("error", e.getClass().getName() + ": " + e.getMessage());
                    }
                    out.println(JSON.writeValueAsString(line));
                }
            }
        }
        out.flush();
    }

    private static Topics topics(JsonNode topics) {
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, List<Set<String>>> racks = new HashMap<>();
        for (JsonNode t : topics) {
            Uuid id = Uuid.fromString(t.get("id").asText());
            counts.put(id, t.get("partitions").asInt());
            List<Set<String>> perPartition = new ArrayList<>();
            for (JsonNode p : t.get("racks")) {
                Set<String> rs = new HashSet<>();
                p.forEach(r -> rs.add(r.asText()));
                perPartition.add(rs);
            }
            racks.put(id, perPartition);
        }
        return new Topics(counts, racks);
    }

    private static Spec spec(JsonNode group, boolean hashed) {
        Map<String, Member> members = hashed ? new HashMap<>() : new LinkedHashMap<>();
        Map<Uuid, Map<Integer, String>> owners = new HashMap<>();
        for (JsonNode m : group.get("members")) {
            String memberId = m.get("id").asText();
            Set<Uuid> subscribed = hashed ? new HashSet<>() : new LinkedHashSet<>();
            m.get("topics").forEach(t -> subscribed.add(Uuid.fromString(t.asText())));
            Map<Uuid, Set<Integer>> target = hashed ? new HashMap<>() : new LinkedHashMap<>();
            for (JsonNode entry : m.get("target")) {
                Uuid topic = Uuid.fromString(entry.get(0).asText());
                Set<Integer> parts = hashed ? new HashSet<>() : new LinkedHashSet<>();
                for (JsonNode p : entry.get(1)) {
                    parts.add(p.asInt());
                    owners.computeIfAbsent(topic, k -> new HashMap<>()).put(p.asInt(), memberId);
                }
                target.put(topic, Collections.unmodifiableSet(parts));
            }
            members.put(memberId, new Member(
                optional(m.get("rack")),
                optional(m.get("instance")),
                Collections.unmodifiableSet(subscribed),
                // The assignors require an unmodifiable map: they reuse it when it is unchanged.
                Collections.unmodifiableMap(target)
            ));
        }
        SubscriptionType type = group.get("type").asText().equals("Homogeneous")
            ? SubscriptionType.HOMOGENEOUS
            : SubscriptionType.HETEROGENEOUS;
        return new Spec(members, type, owners);
    }

    private static Optional<String> optional(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }

    private static ObjectNode assignment(GroupAssignment result) {
        ObjectNode members = JSON.createObjectNode();
        new TreeMap<>(result.members()).forEach((memberId, assignment) -> {
            ObjectNode topics = members.putObject(memberId);
            assignment.partitions().forEach((topic, parts) -> {
                if (!parts.isEmpty()) {
                    ArrayNode list = topics.putArray(topic.toString());
                    new TreeSet<>(parts).forEach(list::add);
                }
            });
        });
        return members;
    }
}
