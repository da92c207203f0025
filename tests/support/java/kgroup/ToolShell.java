package kgroup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.utils.internals.Exit;

/**
 * Runs Kafka's command-line tools one after another in one JVM: a tool's JVM start (a second or
 * two, most of each tool's time) is paid once. Each line on stdin is a JSON request {"main":
 * class, "args": [...], "input": text or null}; the tool's main runs in a thread of its own with
 * its stdout, stderr and stdin swapped for buffers, and one JSON line {"rc", "stdout", "stderr"}
 * answers on the real stdout. Kafka's {@code Exit.exit} and {@code Exit.halt} end the run with
 * their status and park the thread that called them for good, as if the JVM had stopped there:
 * an exception would not do, since tools catch Throwable (TopicCommand calls Exit.exit(0) in a
 * finally block, inside a catch-all).
 */
public final class ToolShell {
  private static volatile CompletableFuture<Integer> current = new CompletableFuture<>();

  private ToolShell() {}

  private static void exited(int code) {
    current.complete(code);
    while (true) {
      LockSupport.park();
    }
  }

  public static void main(String[] args) throws Exception {
    PrintStream realOut = System.out;
    PrintStream realErr = System.err;
    InputStream realIn = System.in;
    ObjectMapper json = new ObjectMapper();
    Exit.setExitProcedure((code, message) -> exited(code));
    Exit.setHaltProcedure((code, message) -> exited(code));
    BufferedReader requests =
        new BufferedReader(new InputStreamReader(realIn, StandardCharsets.UTF_8));
    String line;
    int runs = 0;
    while ((line = requests.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode request = json.readTree(line);
      String mainClass = request.get("main").asText();
      JsonNode argNodes = request.get("args");
      String[] argv = new String[argNodes.size()];
      for (int i = 0; i < argv.length; i++) {
        argv[i] = argNodes.get(i).asText();
      }
      JsonNode inputNode = request.get("input");
      byte[] input =
          inputNode == null || inputNode.isNull()
              ? new byte[0]
              : inputNode.asText().getBytes(StandardCharsets.UTF_8);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      PrintStream toolOut = new PrintStream(out, true, StandardCharsets.UTF_8);
      PrintStream toolErr = new PrintStream(err, true, StandardCharsets.UTF_8);
      CompletableFuture<Integer> result = new CompletableFuture<>();
      current = result;
      System.setOut(toolOut);
      System.setErr(toolErr);
      System.setIn(new ByteArrayInputStream(input));
      Thread tool =
          new Thread(
              () -> {
                try {
                  Method main = Class.forName(mainClass).getMethod("main", String[].class);
                  main.invoke(null, (Object) argv);
                  result.complete(0);
                } catch (InvocationTargetException e) {
                  // As the JVM reports an exception out of main, and exits 1.
                  toolErr.print("Exception in thread \"main\" ");
                  e.getCause().printStackTrace(toolErr);
                  result.complete(1);
                } catch (ReflectiveOperationException e) {
                  toolErr.println("Error: Could not find or load main class " + mainClass);
                  result.complete(1);
                }
              },
              "tool-" + (++runs));
      tool.setDaemon(true);
      tool.start();
      int rc = result.get();
      toolOut.flush();
      toolErr.flush();
      System.setOut(realOut);
      System.setErr(realErr);
      System.setIn(realIn);
      ObjectNode answer = json.createObjectNode();
      answer.put("rc", rc);
      answer.put("stdout", out.toString(StandardCharsets.UTF_8));
      answer.put("stderr", err.toString(StandardCharsets.UTF_8));
      realOut.println(json.writeValueAsString(answer));
      realOut.flush();
    }
  }
}
