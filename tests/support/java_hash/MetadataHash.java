/*
 * Kafka's KIP-1101 metadata hash, computed by Kafka's own code: the topic hash of
 * Utils.computeTopicHash and the group hash of ModernGroup.computeMetadataHash, the path a
 * consumer group's heartbeat takes (tests/group/test_metadata_hash.py).
 *
 * Input on stdin, one command a line, words separated by tabs:
 *   topic <name> <topic id, 32 hex digits> <partition count> [<racks of partition 0> ...]
 *     (the racks of a partition separated by commas, in any order: those of its replicas'
 *     brokers, repeats kept, as KRaftCoordinatorMetadataImage lists them)
 *   group [<subscribed topic name> ...]
 * Output: one line per command, the hash as a signed decimal long.
 */

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.Utils;
import org.apache.kafka.coordinator.group.modern.ModernGroup;
import org.apache.kafka.coordinator.group.modern.SubscriptionCount;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

public class MetadataHash {
    record Topic(String name, Uuid id, int partitionCount, List<List<String>> racks)
        implements CoordinatorMetadataImage.TopicMetadata {
        @Override
        public List<String> partitionRacks(int partition) {
            // A fresh list each call: Utils.computeTopicHash sorts it in place.
            return partition < racks.size() ? new ArrayList<>(racks.get(partition)) : new ArrayList<>();
        }
    }

    /** Image is the metadata image of the topics given so far, all Kafka reads of it. */
    static final class Image implements CoordinatorMetadataImage {
        final Map<String, Topic> byName = new TreeMap<>();

        @Override
        public Set<Uuid> topicIds() {
            return byName.values().stream().map(Topic::id).collect(Collectors.toSet());
        }

        @Override
        public Set<String> topicNames() {
            return byName.keySet();
        }

        @Override
        public Optional<TopicMetadata> topicMetadata(String name) {
            return Optional.ofNullable(byName.get(name));
        }

        @Override
        public Optional<TopicMetadata> topicMetadata(Uuid id) {
            return byName.values().stream().filter(t -> t.id().equals(id)).map(t -> (TopicMetadata) t).findFirst();
        }

        @Override
        public CoordinatorMetadataDelta emptyDelta() {
            throw new UnsupportedOperationException();
        }

        @Override
        public long version() {
            return 0;
        }

        @Override
        public boolean isEmpty() {
            return byName.isEmpty();
        }
    }

    public static void main(String[] args) throws Exception {
        Image image = new Image();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) continue;
            String[] w = line.split("\t", -1);
            switch (w[0]) {
                case "topic" -> {
                    Uuid id = new Uuid(
                        Long.parseUnsignedLong(w[2].substring(0, 16), 16),
                        Long.parseUnsignedLong(w[2].substring(16, 32), 16));
                    List<List<String>> racks = new ArrayList<>();
                    for (int i = 4; i < w.length; i++) {
                        racks.add(w[i].isEmpty() ? List.of() : Arrays.asList(w[i].split(",", -1)));
                    }
                    Topic t = new Topic(w[1], id, Integer.parseInt(w[3]), racks);
                    image.byName.put(t.name(), t);
                    out.append(Utils.computeTopicHash(t.name(), image)).append('\n');
                }
                case "group" -> {
                    Map<String, SubscriptionCount> subscribed = new HashMap<>();
                    for (int i = 1; i < w.length; i++) {
                        subscribed.put(w[i], new SubscriptionCount(1, 0));
                    }
                    out.append(ModernGroup.computeMetadataHash(subscribed, new HashMap<>(), image)).append('\n');
                }
                default -> throw new IllegalArgumentException("unknown command: " + line);
            }
        }
        System.out.print(out);
    }
}
