// Flink CEP run by ACEL's conformance kit (acel/testing/flink.py; papers/conformance.md).
//
// Reads jobs from standard input, one JSON object per line, builds a Flink CEP Pattern from
// each (next / followedBy / followedByAny, oneOrMore, times, optional, allowCombinations,
// consecutive, simple conditions, within, after-match skip strategy), runs Flink's own NFA
// over each partition's events exactly as Flink's CepOperator does in event time (advance
// the time, then process the event; state on the heap instead of a state backend, so that
// no cluster starts per query) and writes one JSON line per match
// ({"stage": [position, ...], ...}) and then "END" (or "ERROR <message>").
//
// A job: {"stages": [{"name": "s0", "link": "begin|next|followedBy|followedByAny",
//          "cond": NODE, "loop": null|"oneOrMore"|"times:N", "combinations": bool,
//          "consecutive": bool, "optional": bool}, ...],
//         "within": null|n, "skip": "NO_SKIP|SKIP_TO_NEXT|SKIP_PAST_LAST_EVENT|SKIP_TO_FIRST:s|SKIP_TO_LAST:s",
//         "events": [{"pos": 0, "ts": 0, "key": "..", "type": "A", "attrs": {"x": 1}}, ...]}
// NODE: {"op": "and|or", "a": NODE, "b": NODE} | {"op": "not", "a": NODE}
//     | {"op": "= != < <= > >=", "a": E, "b": E} | {"op": "true"};
// E:    {"op": "attr", "name": "x"} | {"op": "int", "value": 1} | {"op": "str", "value": "A"}
//     | {"op": "+ - *", "a": E, "b": E}   ("type" is an attribute like the others).
// Positions are ACEL's stream positions; "ts" is the event time Flink sees (the position
// inside the event's partition, so that WITHIN n EVENTS counts there, as in ACEL).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Serializable;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.apache.flink.cep.nfa.NFA;
import org.apache.flink.cep.nfa.NFAState;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.nfa.compiler.NFACompiler;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBuffer;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBufferAccessor;
import org.apache.flink.cep.time.TimerService;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.conditions.SimpleCondition;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

public class AcelFlinkCep {
    /** One event: its ACEL position, Flink timestamp, partition key, type and attributes. */
    public static class Ev implements Serializable {
        public int pos;
        public long ts;
        public String key;
        public String type;
        public HashMap<String, String> attrs = new HashMap<>();
        public Ev() {}
    }

    /** A condition or expression tree (serializable, evaluated per event). */
    public static class Node implements Serializable {
        public String op;
        public String text;
        public long number;
        public Node a;
        public Node b;

        static Node of(JsonNode json) {
            Node node = new Node();
            node.op = json.get("op").asText();
            if (json.has("name")) node.text = json.get("name").asText();
            if (json.has("value")) {
                JsonNode v = json.get("value");
                if (v.isNumber()) node.number = v.asLong(); else node.text = v.asText();
            }
            if (json.has("a")) node.a = of(json.get("a"));
            if (json.has("b")) node.b = of(json.get("b"));
            return node;
        }

        Object value(Ev e) {
            switch (op) {
                case "attr":
                    String raw = "type".equals(text) ? e.type : e.attrs.get(text);
                    if (raw == null) return null;
                    if (raw.startsWith("s:")) return raw.substring(2);
                    return raw.startsWith("i:") ? (Object) Long.parseLong(raw.substring(2)) : raw;
                case "int": return number;
                case "str": return text;
                default:
                    Object x = a.value(e), y = b.value(e);
                    if (!(x instanceof Long) || !(y instanceof Long)) return null;
                    long l = (Long) x, r = (Long) y;
                    return "+".equals(op) ? l + r : "-".equals(op) ? l - r : l * r;
            }
        }

        boolean holds(Ev e) {
            switch (op) {
                case "true": return true;
                case "and": return a.holds(e) && b.holds(e);
                case "or": return a.holds(e) || b.holds(e);
                case "not": return !a.holds(e);
                default:
                    Object x = a.value(e), y = b.value(e);
                    if (x == null || y == null) return false;
                    int c;
                    if (x instanceof Long && y instanceof Long) c = Long.compare((Long) x, (Long) y);
                    else if (x instanceof String && y instanceof String) c = ((String) x).compareTo((String) y);
                    else return "!=".equals(op);
                    switch (op) {
                        case "=": return c == 0;
                        case "!=": return c != 0;
                        case "<": return c < 0;
                        case "<=": return c <= 0;
                        case ">": return c > 0;
                        default: return c >= 0;
                    }
            }
        }
    }

    public static class Cond extends SimpleCondition<Ev> {
        private final Node node;
        public Cond(Node node) { this.node = node; }
        @Override public boolean filter(Ev e) { return node.holds(e); }
    }

    static AfterMatchSkipStrategy skip(String text) {
        if (text == null || text.equals("NO_SKIP")) return AfterMatchSkipStrategy.noSkip();
        if (text.equals("SKIP_TO_NEXT")) return AfterMatchSkipStrategy.skipToNext();
        if (text.equals("SKIP_PAST_LAST_EVENT")) return AfterMatchSkipStrategy.skipPastLastEvent();
        if (text.startsWith("SKIP_TO_FIRST:")) return AfterMatchSkipStrategy.skipToFirst(text.substring(14));
        if (text.startsWith("SKIP_TO_LAST:")) return AfterMatchSkipStrategy.skipToLast(text.substring(13));
        throw new IllegalArgumentException("unknown skip strategy " + text);
    }

    static Pattern<Ev, Ev> pattern(JsonNode job) {
        Pattern<Ev, Ev> p = null;
        AfterMatchSkipStrategy strategy = skip(job.path("skip").isTextual() ? job.get("skip").asText() : null);
        for (JsonNode stage : job.get("stages")) {
            String name = stage.get("name").asText();
            String link = stage.get("link").asText();
            if (p == null) p = Pattern.<Ev>begin(name, strategy);
            else if (link.equals("next")) p = p.next(name);
            else if (link.equals("followedBy")) p = p.followedBy(name);
            else p = p.followedByAny(name);
            p = p.where(new Cond(Node.of(stage.get("cond"))));
            String loop = stage.path("loop").isTextual() ? stage.get("loop").asText() : "";
            if (loop.equals("oneOrMore")) p = p.oneOrMore();
            else if (loop.startsWith("times:")) p = p.times(Integer.parseInt(loop.substring(6)));
            if (!loop.isEmpty()) {
                if (stage.path("combinations").asBoolean(false)) p = p.allowCombinations();
                if (stage.path("consecutive").asBoolean(false)) p = p.consecutive();
            }
            if (stage.path("optional").asBoolean(false)) p = p.optional();
        }
        if (job.hasNonNull("within")) p = p.within(Duration.ofMillis(job.get("within").asLong()));
        return p;
    }

    /** Heap-backed keyed state (one per partition) for the NFA's shared buffer. */
    static Object heapState(Class<?> kind) {
        HashMap<Object, Object> map = new HashMap<>();
        Object[] value = new Object[1];
        return Proxy.newProxyInstance(AcelFlinkCep.class.getClassLoader(), new Class<?>[] {kind},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "get": return map.get(args[0]);
                    case "put": map.put(args[0], args[1]); return null;
                    case "putAll": map.putAll((Map<?, ?>) args[0]); return null;
                    case "remove": map.remove(args[0]); return null;
                    case "contains": return map.containsKey(args[0]);
                    case "entries": return new ArrayList<>(map.entrySet());
                    case "keys": return new ArrayList<>(map.keySet());
                    case "values": return new ArrayList<>(map.values());
                    case "iterator": return new ArrayList<>(map.entrySet()).iterator();
                    case "isEmpty": return map.isEmpty();
                    case "clear": map.clear(); value[0] = null; return null;
                    case "value": return value[0];
                    case "update": value[0] = args[0]; return null;
                    case "hashCode": return System.identityHashCode(proxy);
                    case "equals": return proxy == args[0];
                    case "toString": return "heap state";
                    default: throw new UnsupportedOperationException(method.getName());
                }
            });
    }

    static KeyedStateStore heapStore() {
        return (KeyedStateStore) Proxy.newProxyInstance(AcelFlinkCep.class.getClassLoader(),
            new Class<?>[] {KeyedStateStore.class}, (proxy, method, args) -> {
                String name = method.getName();
                if (name.equals("getMapState")) return heapState(MapState.class);
                if (name.equals("getState") || name.equals("getValueState")) return heapState(ValueState.class);
                if (name.equals("getBackendTypeIdentifier")) return "heap";
                if (name.equals("hashCode")) return System.identityHashCode(proxy);
                if (name.equals("equals")) return proxy == args[0];
                throw new UnsupportedOperationException(name);
            });
    }

    /** One partition's run, as Flink's CepOperator drives the NFA in event time: for each
     * event in timestamp order, advance the time (windows prune), then process it. */
    static void runPartition(Pattern<Ev, Ev> pattern, List<Ev> events, TypeSerializer<Ev> serializer,
                             List<String> out) throws Exception {
        NFA<Ev> nfa = NFACompiler.compileFactory(pattern, false).createNFA();
        NFAState state = nfa.createInitialNFAState();
        SharedBuffer<Ev> buffer = new SharedBuffer<>(heapStore(), serializer);
        AfterMatchSkipStrategy strategy = pattern.getAfterMatchSkipStrategy();
        TimerService timers = () -> 0L;
        for (Ev e : events) {
            try (SharedBufferAccessor<Ev> accessor = buffer.getAccessor()) {
                nfa.advanceTime(accessor, state, e.ts, strategy);
                for (Map<String, List<Ev>> match : nfa.process(accessor, state, e, e.ts, strategy, timers)) {
                    out.add(line(match));
                }
            }
        }
    }

    static String line(Map<String, List<Ev>> match) {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, List<Ev>> entry : match.entrySet()) {
            if (!first) sb.append(',');
            first = false;
            sb.append('"').append(entry.getKey()).append("\":[");
            for (int k = 0; k < entry.getValue().size(); k++) {
                if (k > 0) sb.append(',');
                sb.append(entry.getValue().get(k).pos);
            }
            sb.append(']');
        }
        return sb.append('}').toString();
    }

    static List<String> run(JsonNode job) throws Exception {
        LinkedHashMap<String, List<Ev>> partitions = new LinkedHashMap<>();
        for (JsonNode json : job.get("events")) {
            Ev e = new Ev();
            e.pos = json.get("pos").asInt();
            e.ts = json.get("ts").asLong();
            e.key = json.get("key").asText();
            e.type = json.get("type").asText();
            Iterator<Map.Entry<String, JsonNode>> fields = json.get("attrs").fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                JsonNode v = f.getValue();
                e.attrs.put(f.getKey(), v.isNumber() ? "i:" + v.asLong() : "s:" + v.asText());
            }
            partitions.computeIfAbsent(e.key, k -> new ArrayList<>()).add(e);
        }
        List<String> out = new ArrayList<>();
        Pattern<Ev, Ev> pattern = pattern(job);
        TypeSerializer<Ev> serializer = new KryoSerializer<>(Ev.class, new SerializerConfigImpl());
        for (List<Ev> events : partitions.values()) runPartition(pattern, events, serializer, out);
        return out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream stdout = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);  // Flink's own chatter must not mix with the protocol
        ObjectMapper mapper = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            try {
                for (String match : run(mapper.readTree(line))) stdout.println(match);
                stdout.println("END");
            } catch (Throwable error) {
                Throwable root = error;
                while (root.getCause() != null) root = root.getCause();
                stdout.println("ERROR " + (root.getClass().getSimpleName() + ": " + root.getMessage()).replace('\n', ' '));
            }
            stdout.flush();
        }
        System.exit(0);  // Flink's helper threads must not keep the JVM alive
    }
}
