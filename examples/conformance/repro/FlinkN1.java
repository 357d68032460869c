// N1 reproduced with Flink CEP alone (Flink 2.3.0: flink-cep, flink-dist), no ACEL.
//
//   CP=flink-cep-2.3.0.jar:flink-dist-2.3.0.jar:log4j-*.jar   (pyflink/lib of apache-flink)
//   javac -cp "$CP" FlinkN1.java && java -cp ".:$CP" FlinkN1
//
// Pattern: A followedByAny C, AFTER MATCH SKIP TO FIRST A, on the stream A A C.
// Without a skip the matches are {0, 2} and {1, 2}.  SKIP TO FIRST A after {0, 2} resumes
// at the first event of A in that match, position 0, so {1, 2} (which starts later) stays:
// the expected answer is {0, 2} and {1, 2}.  Flink gives {0, 2} only (FLINK-15873).

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.flink.cep.CEP;
import org.apache.flink.cep.PatternSelectFunction;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.conditions.SimpleCondition;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

public class FlinkN1 {
    static SimpleCondition<String> type(String t) {
        return new SimpleCondition<String>() {
            @Override
            public boolean filter(String e) {
                return e.startsWith(t);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        DataStream<String> events = env.fromData("A0", "A1", "C2");  // type + position
        for (AfterMatchSkipStrategy skip : new AfterMatchSkipStrategy[] {
                AfterMatchSkipStrategy.noSkip(), AfterMatchSkipStrategy.skipToFirst("A")}) {
            Pattern<String, String> pattern = Pattern.<String>begin("A", skip).where(type("A"))
                    .followedByAny("C").where(type("C"));
            DataStream<String> found = CEP.pattern(events, pattern).inProcessingTime()
                    .select(new PatternSelectFunction<String, String>() {
                        @Override
                        public String select(Map<String, List<String>> match) {
                            List<String> positions = new ArrayList<>();
                            for (List<String> part : match.values()) {
                                for (String e : part) {
                                    positions.add(e.substring(1));
                                }
                            }
                            positions.sort(null);
                            return "{" + String.join(", ", positions) + "}";
                        }
                    });
            List<String> out = new ArrayList<>();
            try (CloseableIterator<String> it = found.executeAndCollect()) {
                it.forEachRemaining(out::add);
            }
            System.out.println(skip + ": " + out);
        }
    }
}
