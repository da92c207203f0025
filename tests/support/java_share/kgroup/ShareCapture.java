package kgroup;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Drives every client-facing share group api (KIP-932) once with Kafka's own Java clients, so
 * that a recording proxy between them and a broker sees real frames of each: a share consumer
 * in explicit acknowledgement mode (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge), then
 * the Admin's share group calls (ShareGroupDescribe, DescribeShareGroupOffsets,
 * AlterShareGroupOffsets, DeleteShareGroupOffsets). Arguments: bootstrap, topic, group, and
 * more groups whose share.auto.offset.reset is set to earliest too.
 * Prints one line per step; exits 1 on the first failure.
 */
public final class ShareCapture {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        Properties common = new Properties();
        common.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            // The group's records from the log start, not only those produced after it joins.
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp earliest = new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(res, List.of(earliest))).all().get();
            for (int i = 3; i < args.length; i++) {
                // More groups to read from the log start (another client's).
                ConfigResource more = new ConfigResource(ConfigResource.Type.GROUP, args[i]);
                admin.incrementalAlterConfigs(Map.of(more, List.of(earliest))).all().get();
            }
            Properties p = new Properties();
            p.putAll(common);
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
                }
                producer.flush();
            }
            System.out.println("produced 10");

            Properties c = new Properties();
            c.putAll(common);
            c.put("group.id", group);
            c.put("key.deserializer", StringDeserializer.class.getName());
            c.put("value.deserializer", StringDeserializer.class.getName());
            c.put("share.acknowledgement.mode", "explicit");
            int seen = 0;
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(c)) {
                consumer.subscribe(List.of(topic));
                long deadline = System.currentTimeMillis() + 60_000;
                boolean released = false;
                while (seen < 10 && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                    for (ConsumerRecord<String, String> r : records) {
                        if (!released && r.offset() == 0) {
                            // One release: the record comes back with delivery count 2.
                            consumer.acknowledge(r, AcknowledgeType.RELEASE);
                            released = true;
                        } else {
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                            seen++;
                        }
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync(Duration.ofSeconds(10));
                    }
                }
                System.out.println("consumed " + seen);
            }
            if (seen < 10) {
                System.exit(1);
            }
            Collection<String> groups = List.of(group);
            System.out.println("described " + admin.describeShareGroups(groups).all().get());
            TopicPartition tp = new TopicPartition(topic, 0);
            ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec().topicPartitions(List.of(tp));
            System.out.println("offsets " + admin.listShareGroupOffsets(Map.of(group, spec)).all().get());
            admin.alterShareGroupOffsets(group, Map.of(tp, 3L)).all().get();
            System.out.println("altered");
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            System.out.println("deleted");
        }
    }
}
