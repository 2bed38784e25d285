#!/usr/bin/env python3
"""An Open Inference Protocol gRPC client made by another toolchain than
kernelkit's: Python stubs generated at run time by grpcio-tools (Debian's
python3-grpc-tools) from the vendored open_inference_grpc.proto, called
with grpcio. It reads CSV rows (label column last, ignored), sends them to
ModelInfer as typed fp64_contents and as raw_input_contents (FP64 and
FP32), and prints one label per row for each way; the caller compares
them with `kernelkit predict`.

    python3 oip_client.py PROTO_DIR HOST:PORT MODEL DATA.csv OUT_DIR
"""
import csv
import os
import struct
import subprocess
import sys


def main():
    proto_dir, addr, model, data, out = sys.argv[1:6]
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto_dir,
                    "--python_out=" + out, "--grpc_python_out=" + out,
                    "open_inference_grpc.proto"], check=True)
    sys.path.insert(0, out)
    import grpc
    import open_inference_grpc_pb2 as pb
    import open_inference_grpc_pb2_grpc as pbg

    with open(data) as f:
        rows = [[float(v) for v in r[:-1]] for r in list(csv.reader(f))[1:]]
    n, d = len(rows), len(rows[0])
    flat = [v for r in rows for v in r]
    stub = pbg.GRPCInferenceServiceStub(grpc.insecure_channel(addr))
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ModelReady(pb.ModelReadyRequest(name=model)).ready
    md = stub.ModelMetadata(pb.ModelMetadataRequest(name=model))
    assert list(md.inputs[0].shape) == [-1, d], md

    def infer(datatype, raw):
        t = pb.ModelInferRequest.InferInputTensor(name="input", datatype=datatype, shape=[n, d])
        req = pb.ModelInferRequest(model_name=model, id="py")
        if raw:
            fmt = "<%d%s" % (len(flat), "d" if datatype == "FP64" else "f")
            req.raw_input_contents.append(struct.pack(fmt, *flat))
        elif datatype == "FP64":
            t.contents.fp64_contents.extend(flat)
        else:
            t.contents.fp32_contents.extend(flat)
        req.inputs.append(t)
        resp = stub.ModelInfer(req)
        assert resp.id == "py" and resp.outputs[0].name == "label", resp
        if raw:
            b = resp.raw_output_contents[0]
            return list(struct.unpack("<%dq" % (len(b) // 8), b))
        return list(resp.outputs[0].contents.int64_contents)

    for datatype, raw in [("FP64", False), ("FP64", True), ("FP32", False), ("FP32", True)]:
        labels = infer(datatype, raw)
        assert len(labels) == n, labels
        name = "%s-%s" % (datatype, "raw" if raw else "typed")
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write("\n".join(str(v) for v in labels) + "\n")
        print(name, "labels of", n, "rows written")


if __name__ == "__main__":
    main()
