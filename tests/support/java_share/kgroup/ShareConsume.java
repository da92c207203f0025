package kgroup;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A KafkaShareConsumer's life against a broker, what tests/share/test_share_java_client.py
 * compares between kgroup and Apache Kafka: create the topic, set the group's
 * share.auto.offset.reset to earliest, produce 10 records, consume them in explicit mode
 * releasing offset 0 once, then describe the group. Prints "delivered OFFSET COUNT" per
 * accepted record (sorted), then "state STATE members N", then "closed-state STATE".
 * Arguments: bootstrap, topic, group. Exits 1 when not every record came within 60 s.
 */
public final class ShareConsume {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        Properties common = new Properties();
        common.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp earliest = new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(res, List.of(earliest))).all().get();
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
            Properties c = new Properties();
            c.putAll(common);
            c.put("group.id", group);
            c.put("key.deserializer", StringDeserializer.class.getName());
            c.put("value.deserializer", StringDeserializer.class.getName());
            c.put("share.acknowledgement.mode", "explicit");
            Map<Long, Integer> delivered = new TreeMap<>();
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(c)) {
                consumer.subscribe(List.of(topic));
                long deadline = System.currentTimeMillis() + 60_000;
                boolean released = false;
                while (delivered.size() < 10 && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                    for (ConsumerRecord<String, String> r : records) {
                        if (!released && r.offset() == 0) {
                            consumer.acknowledge(r, AcknowledgeType.RELEASE);
                            released = true;
                        } else {
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                            delivered.put(r.offset(), r.deliveryCount().orElse((short) -1) + 0);
                        }
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync(Duration.ofSeconds(10));
                    }
                }
                for (Map.Entry<Long, Integer> e : delivered.entrySet()) {
                    System.out.println("delivered " + e.getKey() + " " + e.getValue());
                }
                ShareGroupDescription d =
                    admin.describeShareGroups(List.of(group)).all().get().get(group);
                System.out.println("state " + d.groupState() + " members " + d.members().size());
            }
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get().get(group);
            System.out.println("closed-state " + d.groupState() + " members " + d.members().size());
            if (delivered.size() < 10) {
                System.exit(1);
            }
        }
    }
}
