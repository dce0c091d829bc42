/*
 * test_agentrun_job.c: the Job of a task-mode AgentRun (spec 1.12) with
 * exact expected content: the minimal Job whole; the agent's env order
 * (spec env sorted, reply annotations, persona pack, memory) and envFrom;
 * preRun init containers; the sandbox container and seccomp override;
 * imagePullSecrets and nodeSelector; skill sidecars (command, env, params
 * sorted, resources, mountWorkspace false), hostAccess (mount names,
 * readOnly, privileged, runAsRoot, hostNetwork/hostPID, dnsPolicy) and
 * secret volumes; the deadline from a known timeout; host volume names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/fakesup.h"
#include "workers/agentrun_job.h"

#define RUN(meta, spec)                                                       \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\","    \
	"\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\",\"uid\":"          \
	"\"u1\"" meta                                                         \
	"},\"spec\":{\"instanceRef\":\"alice\",\"agentId\":\"primary\","      \
	"\"sessionKey\":\"s1\",\"task\":\"do it\",\"model\":{\"provider\":"   \
	"\"openai\",\"model\":\"gpt-4o\",\"authSecretRef\":\"\"}" spec "}}"

#define HARDENED                                                              \
	"{\"readOnlyRootFilesystem\":true,\"allowPrivilegeEscalation\":"      \
	"false,\"capabilities\":{\"drop\":[\"ALL\"]}}"
#define LABELS                                                                \
	"{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/instance\":"        \
	"\"alice\",\"sympozium.ai/component\":\"agent-run\","                 \
	"\"app.kubernetes.io/part-of\":\"sympozium\","                        \
	"\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}"
#define BRIDGE                                                                \
	"{\"name\":\"ipc-bridge\",\"image\":\"ghcr.io/sympozium-ai/"          \
	"sympozium/"                                                          \
	"ipc-bridge:latest\",\"imagePullPolicy\":\"IfNotPresent\",\"env\":["  \
	"{\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"              \
	"\"INSTANCE_NAME\",\"value\":\"alice\"},{\"name\":\"AGENT_"           \
	"NAMESPACE\","                                                        \
	"\"value\":\"ns\"},{\"name\":\"EVENT_BUS_URL\",\"value\":"            \
	"\"nats://nats.sympozium-system.svc:4222\"}],\"volumeMounts\":[{"     \
	"\"name\":\"ipc\",\"mountPath\":\"/ipc\"}],\"resources\":{"           \
	"\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"},\"limits\":{"     \
	"\"cpu\":\"100m\",\"memory\":\"128Mi\"}},"                            \
	"\"securityContext\":" HARDENED "}"
#define BASE_VOLUMES                                                          \
	"{\"name\":\"workspace\",\"emptyDir\":{\"sizeLimit\":\"1Gi\"}},"      \
	"{\"name\":\"ipc\",\"emptyDir\":{\"medium\":\"Memory\","              \
	"\"sizeLimit\":"                                                      \
	"\"64Mi\"}},{\"name\":\"tmp\",\"emptyDir\":{\"sizeLimit\":"           \
	"\"256Mi\"}}"

static json_object *
build(const char *run, const char *skills, const struct agentrun_sidecar *sc,
        size_t nsc, const char *persona, bool memory, int64_t timeout_s)
{
	json_object *r = json_tokener_parse(run);
	json_object *sk = skills != NULL ? json_tokener_parse(skills) : NULL;
	struct agentrun_job_in in = { r, sk, sc, nsc, persona, memory,
		timeout_s, NULL, NULL, NULL };
	json_object *job;

	assert_non_null(r);
	job = agentrun_job_build(&in);
	json_object_put(r);
	json_object_put(sk);
	return (job);
}

static json_object *
at(json_object *job, const char *path, size_t i)
{
	return (json_object_array_get_idx(jx_get(job, path), i));
}

/* The minimal run: the whole Job. */
static void
test_minimal(void **state)
{
	json_object *job = build(RUN("", ""), NULL, NULL, 0, NULL, false, 0);

	(void)state;
	fakesup_assert_json(job,
	        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	        "\"name\":\"r\",\"namespace\":\"ns\",\"labels\":" LABELS "},"
	        "\"spec\":{\"ttlSecondsAfterFinished\":300,"
	        "\"activeDeadlineSeconds\":600,\"backoffLimit\":0,"
	        "\"template\":{\"metadata\":{\"labels\":" LABELS "},"
	        "\"spec\":{\"restartPolicy\":\"Never\",\"serviceAccountName\":"
	        "\"sympozium-agent\",\"securityContext\":{\"runAsNonRoot\":"
	        "true,\"runAsUser\":1000,\"fsGroup\":1000,\"seccompProfile\":{"
	        "\"type\":\"RuntimeDefault\"}},\"containers\":[{\"name\":"
	        "\"agent\",\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	        "agent-runner:latest\",\"imagePullPolicy\":\"IfNotPresent\","
	        "\"env\":[{\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{"
	        "\"name\":"
	        "\"AGENT_ID\",\"value\":\"primary\"},{\"name\":\"SESSION_"
	        "KEY\","
	        "\"value\":\"s1\"},{\"name\":\"INSTANCE_NAME\",\"value\":"
	        "\"alice\"},{\"name\":\"PERSONA_PACK_NAME\"},{\"name\":"
	        "\"AGENT_NAMESPACE\",\"value\":\"ns\"},{\"name\":\"TASK\","
	        "\"value\":\"do it\"},{\"name\":\"SYSTEM_PROMPT\"},{\"name\":"
	        "\"MODEL_PROVIDER\",\"value\":\"openai\"},{\"name\":"
	        "\"MODEL_NAME\",\"value\":\"gpt-4o\"},{\"name\":"
	        "\"MODEL_BASE_URL\"},{\"name\":\"THINKING_MODE\"},{\"name\":"
	        "\"TOOLS_ENABLED\",\"value\":\"true\"}],\"volumeMounts\":[{"
	        "\"name\":\"workspace\",\"mountPath\":\"/"
	        "workspace\"},{\"name\":"
	        "\"skills\",\"mountPath\":\"/skills\",\"readOnly\":true},{"
	        "\"name\":\"ipc\",\"mountPath\":\"/ipc\"},{\"name\":\"tmp\","
	        "\"mountPath\":\"/"
	        "tmp\"}],\"resources\":{\"requests\":{\"cpu\":"
	        "\"250m\",\"memory\":\"512Mi\"},\"limits\":{\"cpu\":\"1\","
	        "\"memory\":\"1Gi\"}},\"securityContext\":" HARDENED
	        "}," BRIDGE "],\"volumes\":[" BASE_VOLUMES
	        ",{\"name\":\"skills\","
	        "\"emptyDir\":{}}],\"dnsPolicy\":\"ClusterFirst\"}}}}");
	json_object_put(job);
}

#define RICH_SPEC                                                             \
	",\"systemPrompt\":\"be brief\",\"env\":{\"Z\":\"26\",\"A\":\"1\"},"  \
	"\"imagePullSecrets\":[{\"name\":\"reg\"}],\"sandbox\":{\"enabled\":" \
	"true,\"image\":\"my/sandbox:1\",\"securityContext\":{"               \
	"\"runAsNonRoot\":false,\"seccompProfile\":{\"type\":\"Localhost\"}}" \
	","                                                                   \
	"\"resources\":{\"limits\":{\"cpu\":\"9\"}}},\"lifecycle\":{"         \
	"\"preRun\":[{\"name\":\"fetch\",\"image\":\"busybox\",\"command\":"  \
	"[\"sh\",\"-c\"],\"args\":[\"echo hi\"],\"env\":[{\"name\":\"H\","    \
	"\"value\":\"1\"}],\"timeout\":\"1m\"},{\"name\":\"plain\","          \
	"\"image\":\"alpine\"}]}"
#define RICH_MODEL                                                            \
	",\"model\":{\"provider\":\"ollama\",\"model\":\"llama3\","           \
	"\"authSecretRef\":\"key\",\"baseURL\":\"http://llm:11434\","         \
	"\"thinking\":\"high\",\"nodeSelector\":{\"gpu\":\"a100\"}}"
#define PRE_ENV                                                               \
	"{\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"              \
	"\"INSTANCE_NAME\",\"value\":\"alice\"},{\"name\":\"AGENT_"           \
	"NAMESPACE\","                                                        \
	"\"value\":\"ns\"}"
#define PRE_REST                                                              \
	"\"volumeMounts\":[{\"name\":\"workspace\",\"mountPath\":"            \
	"\"/workspace\"},{\"name\":\"ipc\",\"mountPath\":\"/"                 \
	"ipc\"},{\"name\":"                                                   \
	"\"tmp\",\"mountPath\":\"/tmp\"}],\"resources\":{\"requests\":{"      \
	"\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":"         \
	"\"500m\",\"memory\":\"512Mi\"}},\"securityContext\":" HARDENED

/* The agent's env in order, envFrom, the memory mount and volume, preRun
 * init containers, the sandbox container, seccomp from the sandbox,
 * imagePullSecrets, nodeSelector and the deadline from a timeout. */
static void
test_agent_hooks_sandbox(void **state)
{
	json_object *job = build(RUN(",\"annotations\":{\"sympozium.ai/"
	                             "reply-channel\":\"slack\","
	                             "\"sympozium.ai/reply-chat-id\":\"C1\"}",
	                                 RICH_SPEC RICH_MODEL),
	        NULL, NULL, 0, "pack", true, 120);
	json_object *pod = jx_get(job, "spec.template.spec");
	json_object *agent = at(pod, "containers", 0);

	(void)state;
	fakesup_assert_json(jx_get(job, "spec.activeDeadlineSeconds"), "180");
	fakesup_assert_json(json_object_object_get(agent, "env"),
	        "[{\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"
	        "\"AGENT_ID\",\"value\":\"primary\"},{\"name\":\"SESSION_"
	        "KEY\","
	        "\"value\":\"s1\"},{\"name\":\"INSTANCE_NAME\",\"value\":"
	        "\"alice\"},{\"name\":\"PERSONA_PACK_NAME\",\"value\":"
	        "\"pack\"},"
	        "{\"name\":\"AGENT_NAMESPACE\",\"value\":\"ns\"},{\"name\":"
	        "\"TASK\",\"value\":\"do it\"},{\"name\":\"SYSTEM_PROMPT\","
	        "\"value\":\"be brief\"},{\"name\":\"MODEL_PROVIDER\","
	        "\"value\":\"ollama\"},{\"name\":\"MODEL_NAME\",\"value\":"
	        "\"llama3\"},{\"name\":\"MODEL_BASE_URL\",\"value\":"
	        "\"http://llm:11434\"},{\"name\":\"THINKING_MODE\",\"value\":"
	        "\"high\"},{\"name\":\"MEMORY_ENABLED\",\"value\":\"true\"},"
	        "{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"Z\",\"value\":"
	        "\"26\"},{\"name\":\"TOOLS_ENABLED\",\"value\":\"true\"},"
	        "{\"name\":\"SOURCE_CHANNEL\",\"value\":\"slack\"},{\"name\":"
	        "\"SOURCE_CHAT_ID\",\"value\":\"C1\"}]");
	fakesup_assert_json(json_object_object_get(agent, "envFrom"),
	        "[{\"secretRef\":{\"name\":\"key\"}}]");
	fakesup_assert_json(json_object_object_get(agent, "volumeMounts"),
	        "[{\"name\":\"workspace\",\"mountPath\":\"/workspace\"},"
	        "{\"name\":\"skills\",\"mountPath\":\"/skills\",\"readOnly\":"
	        "true},{\"name\":\"ipc\",\"mountPath\":\"/ipc\"},{\"name\":"
	        "\"tmp\",\"mountPath\":\"/tmp\"},{\"name\":\"memory\","
	        "\"mountPath\":\"/memory\",\"readOnly\":true}]");
	fakesup_assert_json(json_object_object_get(pod, "initContainers"),
	        "[{\"name\":\"pre-fetch\",\"image\":\"busybox\","
	        "\"imagePullPolicy\":\"IfNotPresent\",\"env\":[" PRE_ENV
	        ",{\"name\":\"H\",\"value\":\"1\"},{\"name\":\"A\",\"value\":"
	        "\"1\"},{\"name\":\"Z\",\"value\":\"26\"}],\"command\":["
	        "\"sh\","
	        "\"-c\"],\"args\":[\"echo hi\"]," PRE_REST "},{\"name\":"
	        "\"pre-plain\",\"image\":\"alpine\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"env\":[" PRE_ENV ",{\"name\":\"A\","
	        "\"value\":\"1\"},{\"name\":\"Z\",\"value\":\"26\"}]," PRE_REST
	        "}]");
	assert_int_equal(
	        json_object_array_length(jx_get(pod, "containers")), 3);
	fakesup_assert_json(at(pod, "containers", 1), BRIDGE);
	fakesup_assert_json(at(pod, "containers", 2),
	        "{\"name\":\"sandbox\",\"image\":\"my/sandbox:1\","
	        "\"imagePullPolicy\":\"IfNotPresent\",\"command\":[\"sleep\","
	        "\"infinity\"],\"volumeMounts\":[{\"name\":\"workspace\","
	        "\"mountPath\":\"/workspace\"},{\"name\":\"tmp\","
	        "\"mountPath\":\"/tmp\"}],\"resources\":{\"requests\":{"
	        "\"cpu\":\"100m\",\"memory\":\"256Mi\"},\"limits\":{\"cpu\":"
	        "\"500m\",\"memory\":\"512Mi\"}},\"securityContext\":{"
	        "\"readOnlyRootFilesystem\":true,\"capabilities\":{\"drop\":"
	        "[\"ALL\"]}}}");
	fakesup_assert_json(json_object_object_get(pod, "securityContext"),
	        "{\"runAsNonRoot\":true,\"runAsUser\":1000,\"fsGroup\":1000,"
	        "\"seccompProfile\":{\"type\":\"Localhost\"}}");
	fakesup_assert_json(json_object_object_get(pod, "imagePullSecrets"),
	        "[{\"name\":\"reg\"}]");
	fakesup_assert_json(json_object_object_get(pod, "nodeSelector"),
	        "{\"gpu\":\"a100\"}");
	fakesup_assert_json(json_object_object_get(pod, "volumes"),
	        "[" BASE_VOLUMES ",{\"name\":\"skills\",\"emptyDir\":{}},"
	        "{\"name\":\"memory\",\"configMap\":{\"name\":"
	        "\"alice-memory\",\"optional\":true}}]");
	assert_null(json_object_object_get(pod, "hostNetwork"));
	assert_string_equal(jx_get_str(pod, "dnsPolicy"), "ClusterFirst");
	json_object_put(job);
}

#define SKILL_REFS                                                            \
	"[{\"skillPackRef\":\"skillpack-k8s\",\"params\":{\"b\":\"2\","       \
	"\"a\":\"1\"}},{\"skillPackRef\":\"hw\",\"configMapRef\":"            \
	"\"hw-extra\"},{\"configMapRef\":\"only-cm\"},{\"skillPackRef\":"     \
	"\"plain\"}]"

/* Skill sidecars: command, env then SKILL_ params sorted, requests equal
 * to limits, workspace unless mountWorkspace is false, secret volumes
 * (default and explicit paths), hostAccess mounts (empty paths skipped,
 * readOnly by default), the privileged/root security context, pod
 * hostNetwork/hostPID and dnsPolicy; a sidecar whose hostAccess is not
 * enabled gets none of it; the skills projection. */
static void
test_sidecars(void **state)
{
	json_object *k8s = json_tokener_parse(
	        "{\"image\":\"k8s-tool:1\",\"command\":[\"tool\",\"serve\"],"
	        "\"env\":[{\"name\":\"E\",\"value\":\"e\"}],\"resources\":{"
	        "\"cpu\":\"200m\",\"memory\":\"64Mi\"},\"secretRef\":"
	        "\"kube-creds\"}");
	json_object *hw = json_tokener_parse(
	        "{\"image\":\"hw:2\",\"command\":[],\"mountWorkspace\":false,"
	        "\"hostAccess\":{\"enabled\":true,\"hostNetwork\":true,"
	        "\"hostPID\":true,\"privileged\":true,\"runAsRoot\":true,"
	        "\"mounts\":[{\"hostPath\":\"/dev\",\"mountPath\":\"/host/"
	        "dev\"},"
	        "{\"hostPath\":\"\",\"mountPath\":\"/x\"},{\"hostPath\":"
	        "\"/sys\",\"mountPath\":\"/host/sys\",\"readOnly\":false}]},"
	        "\"secretRef\":\"hw-token\",\"secretMountPath\":\"/etc/hw\"}");
	json_object *plain = json_tokener_parse(
	        "{\"image\":\"p:1\",\"hostAccess\":{\"enabled\":false,"
	        "\"hostNetwork\":true,\"privileged\":true,\"mounts\":[{"
	        "\"hostPath\":\"/a\",\"mountPath\":\"/b\"}]}}");
	json_object *params = json_tokener_parse("{\"b\":\"2\",\"a\":\"1\"}");
	struct agentrun_sidecar sc[] = { { "k8s", k8s, params },
		{ "hw", hw, NULL }, { "plain", plain, NULL } };
	json_object *job
	        = build(RUN("", ""), SKILL_REFS, sc, 3, NULL, false, 0);
	json_object *pod = jx_get(job, "spec.template.spec");

	(void)state;
	assert_int_equal(
	        json_object_array_length(jx_get(pod, "containers")), 5);
	fakesup_assert_json(at(pod, "containers", 2),
	        "{\"name\":\"skill-k8s\",\"image\":\"k8s-tool:1\","
	        "\"imagePullPolicy\":\"IfNotPresent\",\"command\":[\"tool\","
	        "\"serve\"],\"env\":[{\"name\":\"E\",\"value\":\"e\"},{"
	        "\"name\":"
	        "\"SKILL_A\",\"value\":\"1\"},{\"name\":\"SKILL_B\",\"value\":"
	        "\"2\"}],\"volumeMounts\":[{\"name\":\"ipc\",\"mountPath\":"
	        "\"/ipc\"},{\"name\":\"tmp\",\"mountPath\":\"/"
	        "tmp\"},{\"name\":"
	        "\"workspace\",\"mountPath\":\"/workspace\"},{\"name\":"
	        "\"skill-secret-k8s\",\"mountPath\":\"/secrets/kube-creds\","
	        "\"readOnly\":true}],\"resources\":{\"requests\":{\"cpu\":"
	        "\"200m\",\"memory\":\"64Mi\"},\"limits\":{\"cpu\":\"200m\","
	        "\"memory\":\"64Mi\"}}}");
	fakesup_assert_json(at(pod, "containers", 3),
	        "{\"name\":\"skill-hw\",\"image\":\"hw:2\","
	        "\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"volumeMounts\":[{\"name\":\"ipc\","
	        "\"mountPath\":\"/ipc\"},{\"name\":\"tmp\",\"mountPath\":"
	        "\"/tmp\"},{\"name\":\"host-hw-0\",\"mountPath\":\"/host/"
	        "dev\","
	        "\"readOnly\":true},{\"name\":\"host-hw-2\",\"mountPath\":"
	        "\"/host/sys\"},{\"name\":\"skill-secret-hw\",\"mountPath\":"
	        "\"/etc/hw\",\"readOnly\":true}],\"resources\":{\"requests\":{"
	        "\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":"
	        "\"100m\",\"memory\":\"128Mi\"}},\"securityContext\":{"
	        "\"privileged\":true,\"allowPrivilegeEscalation\":true,"
	        "\"seccompProfile\":{\"type\":\"Unconfined\"},\"runAsUser\":0,"
	        "\"runAsNonRoot\":false}}");
	fakesup_assert_json(at(pod, "containers", 4),
	        "{\"name\":\"skill-plain\",\"image\":\"p:1\","
	        "\"imagePullPolicy\":\"IfNotPresent\",\"volumeMounts\":[{"
	        "\"name\":\"ipc\",\"mountPath\":\"/ipc\"},{\"name\":\"tmp\","
	        "\"mountPath\":\"/"
	        "tmp\"},{\"name\":\"workspace\",\"mountPath\":"
	        "\"/workspace\"}],\"resources\":{\"requests\":{\"cpu\":"
	        "\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":\"100m\","
	        "\"memory\":\"128Mi\"}}}");
	fakesup_assert_json(json_object_object_get(pod, "volumes"),
	        "[" BASE_VOLUMES ",{\"name\":\"skills\",\"projected\":{"
	        "\"sources\":[{\"configMap\":{\"name\":\"skillpack-k8s\","
	        "\"optional\":true}},{\"configMap\":{\"name\":\"hw\","
	        "\"optional\":true}},{\"configMap\":{\"name\":\"hw-extra\","
	        "\"optional\":true}},{\"configMap\":{\"name\":\"only-cm\","
	        "\"optional\":true}},{\"configMap\":{\"name\":\"plain\","
	        "\"optional\":true}}]}},{\"name\":\"skill-secret-k8s\","
	        "\"secret\":{\"secretName\":\"kube-creds\",\"optional\":true}}"
	        ","
	        "{\"name\":\"host-hw-0\",\"hostPath\":{\"path\":\"/dev\"}},"
	        "{\"name\":\"host-hw-2\",\"hostPath\":{\"path\":\"/sys\"}},"
	        "{\"name\":\"skill-secret-hw\",\"secret\":{\"secretName\":"
	        "\"hw-token\",\"optional\":true}}]");
	assert_true(json_object_get_boolean(jx_get(pod, "hostNetwork")));
	assert_true(json_object_get_boolean(jx_get(pod, "hostPID")));
	assert_string_equal(
	        jx_get_str(pod, "dnsPolicy"), "ClusterFirstWithHostNet");
	json_object_put(job);
	/* hostPID alone leaves the DNS policy alone */
	json_object_object_del(
	        json_object_object_get(hw, "hostAccess"), "hostNetwork");
	job = build(RUN("", ""), SKILL_REFS, sc + 1, 1, NULL, false, 0);
	pod = jx_get(job, "spec.template.spec");
	assert_null(json_object_object_get(pod, "hostNetwork"));
	assert_true(json_object_get_boolean(jx_get(pod, "hostPID")));
	assert_string_equal(jx_get_str(pod, "dnsPolicy"), "ClusterFirst");
	json_object_put(job);
	json_object_put(k8s);
	json_object_put(hw);
	json_object_put(plain);
	json_object_put(params);
}

/* Later upstream fix #167 (imagepullpolicy.go ResolveImagePullPolicy,
 * agentrun_controller.go buildContainers, commit 74a0895): the sandbox,
 * a preRun hook and a skill sidecar take their valid imagePullPolicy,
 * else IfNotPresent (008266e's fixed value); the agent keeps
 * IfNotPresent. */
static void
test_pull_policy(void **state)
{
	json_object *side = json_tokener_parse(
	        "{\"image\":\"t:1\",\"imagePullPolicy\":\"Never\"}");
	json_object *bad = json_tokener_parse(
	        "{\"image\":\"u:1\",\"imagePullPolicy\":\"Sometimes\"}");
	struct agentrun_sidecar sc[]
	        = { { "a", side, NULL }, { "b", bad, NULL } };
	json_object *job = build(RUN("",
	                                 ",\"sandbox\":{\"enabled\":true,"
	                                 "\"imagePullPolicy\":\"Always\"},"
	                                 "\"lifecycle\":{\"preRun\":[{"
	                                 "\"name\":\"p\",\"image\":\"x\","
	                                 "\"imagePullPolicy\":\"Always\"},{"
	                                 "\"name\":\"q\",\"image\":\"y\"}]}"),
	        NULL, sc, 2, NULL, false, 0);
	json_object *pod = jx_get(job, "spec.template.spec");
	static const struct {
		const char *list, *name, *want;
	} cases[] = {
		{ "containers", "agent", "IfNotPresent" },
		{ "containers", "sandbox", "Always" },
		{ "containers", "skill-a", "Never" },
		{ "containers", "skill-b", "IfNotPresent" },
		{ "initContainers", "pre-p", "Always" },
		{ "initContainers", "pre-q", "IfNotPresent" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *l = jx_get(pod, cases[i].list), *c = NULL;
		for (size_t k = 0; k < json_object_array_length(l); k++) {
			json_object *e = json_object_array_get_idx(l, k);
			if (strcmp(jx_get_str(e, "name"), cases[i].name)
			        == 0) {
				c = e;
			}
		}
		if (c == NULL) {
			fail_msg("no container %s", cases[i].name);
		}
		assert_string_equal(
		        jx_get_str(c, "imagePullPolicy"), cases[i].want);
	}
	json_object_put(job);
	json_object_put(side);
	json_object_put(bad);
}

/* The sandbox image default and an empty seccomp type. */
static void
test_sandbox_default_image(void **state)
{
	json_object *job
	        = build(RUN("",
	                        ",\"sandbox\":{\"enabled\":true,"
	                        "\"securityContext\":{"
	                        "\"seccompProfile\":{\"type\":\"\"}}}"),
	                NULL, NULL, 0, "", false, 0);

	(void)state;
	assert_string_equal(
	        jx_get_str(
	                at(job, "spec.template.spec.containers", 2), "image"),
	        "ghcr.io/sympozium-ai/sympozium/sandbox:latest");
	assert_string_equal(jx_get_str(job,
	                            "spec.template.spec."
	                            "securityContext.seccompProfile."
	                            "type"),
	        "RuntimeDefault");
	json_object_put(job);
	job = build(RUN("", ",\"sandbox\":{\"enabled\":false}"), NULL, NULL, 0,
	        NULL, false, 0);
	assert_int_equal(json_object_array_length(jx_get(job,
	                         "spec.template.spec."
	                         "containers")),
	        2);
	json_object_put(job);
}

static void
test_host_volume_name(void **state)
{
	char out[64];
	char long_pack[80];

	(void)state;
	agentrun_job_host_volume("hw", 0, out);
	assert_string_equal(out, "host-hw-0");
	agentrun_job_host_volume("My_Pack.X", 3, out);
	assert_string_equal(out, "host-my-pack-x-3");
	memset(long_pack, 'a', sizeof(long_pack) - 1);
	long_pack[sizeof(long_pack) - 1] = '\0';
	agentrun_job_host_volume(long_pack, 12, out);
	assert_int_equal(strlen(out), 63);
	assert_memory_equal(out, "host-aaaa", 9);
}

/* The memory skill (agentrun_controller.go buildContainers): the agent
 * gets MEMORY_SERVER_URL after MEMORY_ENABLED and before the spec env,
 * and wait-for-memory (busybox:1.36, hardened, 120 s wget loop on
 * <url>/health, 50m/32Mi..100m/64Mi) runs before the preRun hooks. */
static void
test_memory_skill(void **state)
{
	json_object *job = build(RUN("",
	                                 ",\"env\":{\"A\":\"1\"},"
	                                 "\"lifecycle\":{\"preRun\":[{"
	                                 "\"name\":\"p\",\"image\":\"x\"}]}"),
	        "[{\"skillPackRef\":\"memory\"}]", NULL, 0, NULL, true, 0);
	json_object *env = jx_get(job, "spec.template.spec.containers.0.env");
	size_t n = json_object_array_length(env);

	(void)state;
	fakesup_assert_json(
	        at(job, "spec.template.spec.containers.0.env", n - 4),
	        "{\"name\":\"MEMORY_ENABLED\",\"value\":\"true\"}");
	fakesup_assert_json(
	        at(job, "spec.template.spec.containers.0.env", n - 3),
	        "{\"name\":\"MEMORY_SERVER_URL\",\"value\":"
	        "\"http://alice-memory.ns.svc:8080\"}");
	fakesup_assert_json(
	        at(job, "spec.template.spec.containers.0.env", n - 2),
	        "{\"name\":\"A\",\"value\":\"1\"}");
	assert_int_equal(
	        jx_array_len(jx_get(job, "spec.template.spec.initContainers")),
	        2);
	fakesup_assert_json(at(job, "spec.template.spec.initContainers", 0),
	        "{\"name\":\"wait-for-memory\",\"image\":\"busybox:1.36\","
	        "\"imagePullPolicy\":\"IfNotPresent\","
	        "\"securityContext\":" HARDENED
	        ",\"command\":[\"sh\",\"-c\",\"elapsed=0; until "
	        "wget -q --spider --timeout=2 "
	        "http://alice-memory.ns.svc:8080/health; do echo 'waiting "
	        "for memory server...'; sleep 2; elapsed=$((elapsed+2)); if "
	        "[ $elapsed -ge 120 ]; then echo 'ERROR: memory server not "
	        "ready after 120s'; exit 1; fi; done\"],\"resources\":{"
	        "\"requests\":{\"cpu\":\"50m\",\"memory\":\"32Mi\"},"
	        "\"limits\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}");
	assert_string_equal(
	        jx_get_str(at(job, "spec.template.spec.initContainers", 1),
	                "name"),
	        "pre-p");
	json_object_put(job);
	/* another skill: neither */
	job = build(RUN("", ""), "[{\"skillPackRef\":\"k8s-ops\"}]", NULL, 0,
	        NULL, false, 0);
	assert_null(jx_get(job, "spec.template.spec.initContainers"));
	json_object_put(job);
}

#define MCP_ENV                                                               \
	"{\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"              \
	"\"MCP_CONFIG_PATH\",\"value\":\"/config/mcp-servers.yaml\"},{"       \
	"\"name\":\"MCP_IPC_PATH\",\"value\":\"/ipc/tools\"},{\"name\":"      \
	"\"MCP_MANIFEST_PATH\",\"value\":\"/ipc/tools/mcp-tools.json\"},{"    \
	"\"name\":\"TRACEPARENT\",\"value\":\"00-aa-bb-01\"},{\"name\":"      \
	"\"MCP_AUTH_GH_X\",\"valueFrom\":{\"secretKeyRef\":{\"name\":"        \
	"\"gh-tok\",\"key\":\"token\",\"optional\":true}}},{\"name\":"        \
	"\"MCP_AUTH_JIRA\",\"valueFrom\":{\"secretKeyRef\":{\"name\":"        \
	"\"j\",\"key\":\"pat\",\"optional\":true}}}"
#define MCP_REST                                                              \
	"\"volumeMounts\":[{\"name\":\"ipc\",\"mountPath\":\"/ipc\"},{"       \
	"\"name\":\"mcp-config\",\"mountPath\":\"/config\",\"readOnly\":"     \
	"true}],\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"    \
	"\"128Mi\"},\"limits\":{\"cpu\":\"200m\",\"memory\":\"256Mi\"}},"     \
	"\"securityContext\":" HARDENED "}"

/* MCP servers (agentrun_controller.go buildContainers, buildVolumes):
 * mcp-discover init container (MCP_DISCOVER_ONLY last), mcp-bridge after
 * ipc-bridge (and sandbox), the shared env with TRACEPARENT and
 * MCP_AUTH_* secret refs (authKey, default "token"; none without
 * authSecret), and the optional mcp-config ConfigMap volume. */
static void
test_mcp(void **state)
{
	json_object *r
	        = json_tokener_parse(RUN(",\"annotations\":{\"otel.dev/"
	                                 "traceparent\":\"00-aa-bb-01\"}",
	                ""));
	json_object *mcp = json_tokener_parse(
	        "[{\"name\":\"gh-x\",\"url\":\"http://gh\",\"authSecret\":"
	        "\"gh-tok\"},{\"name\":\"plain\",\"url\":\"http://p\"},{"
	        "\"name\":\"jira\",\"url\":\"http://j\",\"authSecret\":\"j\","
	        "\"authKey\":\"pat\"}]");
	struct agentrun_job_in in
	        = { r, NULL, NULL, 0, NULL, false, 0, mcp, NULL, NULL };
	json_object *job = agentrun_job_build(&in), *vols;

	(void)state;
	fakesup_assert_json(at(job, "spec.template.spec.initContainers", 0),
	        "{\"name\":\"mcp-discover\",\"image\":\"ghcr.io/sympozium-ai/"
	        "sympozium/mcp-bridge:latest\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"env\":[" MCP_ENV ",{\"name\":"
	        "\"MCP_DISCOVER_ONLY\",\"value\":\"true\"}]," MCP_REST);
	assert_int_equal(
	        jx_array_len(jx_get(job, "spec.template.spec.containers")), 3);
	fakesup_assert_json(at(job, "spec.template.spec.containers", 2),
	        "{\"name\":\"mcp-bridge\",\"image\":\"ghcr.io/sympozium-ai/"
	        "sympozium/mcp-bridge:latest\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"env\":[" MCP_ENV "]," MCP_REST);
	vols = jx_get(job, "spec.template.spec.volumes");
	fakesup_assert_json(
	        json_object_array_get_idx(vols, jx_array_len(vols) - 1),
	        "{\"name\":\"mcp-config\",\"configMap\":{\"name\":"
	        "\"r-mcp-servers\",\"optional\":true}}");
	json_object_put(job);
	json_object_put(mcp);
	json_object_put(r);
}

#define OTEL_ENV                                                              \
	"{\"name\":\"SYMPOZIUM_OTEL_ENABLED\",\"value\":\"true\"},{\"name\":" \
	"\"SYMPOZIUM_OTEL_OTLP_ENDPOINT\",\"value\":\"otel:4317\"},{"         \
	"\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\",\"value\":\"otel:4317\"},"  \
	"{\"name\":\"SYMPOZIUM_OTEL_SERVICE_NAME\",\"value\":\"svc\"},{"      \
	"\"name\":\"OTEL_SERVICE_NAME\",\"value\":\"svc\"},{\"name\":"        \
	"\"SYMPOZIUM_OTEL_RESOURCE_ATTRIBUTES\",\"value\":" ATTRS "},{"       \
	"\"name\":\"OTEL_RESOURCE_ATTRIBUTES\",\"value\":" ATTRS "}"
#define ATTRS                                                                 \
	"\"env=prod,k8s.namespace.name=ns,sympozium.agent_run.id=r,"          \
	"sympozium.instance.name=other\""

/* An enabled spec.observability (agentrun_controller.go
 * buildObservabilityEnv and buildContainers): SYMPOZIUM_OTEL_ENABLED, the
 * set pairs (no protocol here), resource attributes (defaults overridden,
 * empty values dropped, "k=v" sorted) last in the agent's, ipc-bridge's
 * and, after TRACEPARENT, before MCP_AUTH_*, the MCP containers' env. */
static void
test_observability(void **state)
{
	json_object *r = json_tokener_parse(RUN("", ""));
	json_object *obs = json_tokener_parse(
	        "{\"enabled\":true,\"otlpEndpoint\":\"otel:4317\","
	        "\"serviceName\":\"svc\",\"resourceAttributes\":{\"env\":"
	        "\"prod\",\"sympozium.instance.name\":\"other\",\"empty\":"
	        "\"\"}}");
	json_object *mcp
	        = json_tokener_parse("[{\"name\":\"a\",\"url\":\"http://"
	                             "a\",\"authSecret\":\"s\"}]");
	struct agentrun_job_in in
	        = { r, NULL, NULL, 0, NULL, false, 0, mcp, obs, NULL };
	json_object *job = agentrun_job_build(&in), *env, *want;
	size_t n;

	(void)state;
	want = json_tokener_parse("[" OTEL_ENV "]");
	for (size_t c = 0; c < 3; c++) {
		char path[64];
		snprintf(path, sizeof(path),
		        "spec.template.spec.containers.%zu.env", c);
		env = jx_get(job, path);
		n = json_object_array_length(env);
		/* the MCP container ends with its one MCP_AUTH_A */
		for (size_t i = 0; i < 7; i++) {
			assert_true(json_object_equal(
			        json_object_array_get_idx(
			                env, n - 7 - (c == 2) + i),
			        json_object_array_get_idx(want, i)));
		}
	}
	assert_string_equal(
	        jx_get_str(
	                at(job, "spec.template.spec.containers.2.env", n - 1),
	                "name"),
	        "MCP_AUTH_A");
	json_object_put(want);
	json_object_put(job);
	json_object_put(obs);
	json_object_put(mcp);
	json_object_put(r);
}

/* status.traceID: the trace ID of a valid traceparent annotation, as
 * upstream's no-op tracer keeps it; nothing for a missing or malformed
 * one (upstream's propagator rejects it and the span has no trace ID). */
static const char *
trace_id_of(const char *annotations, json_object *st)
{
	char run[512];
	json_object *r;

	snprintf(run, sizeof(run),
	        "{\"metadata\":{\"name\":\"r\",\"annotations\":%s}}",
	        annotations);
	r = json_tokener_parse(run);
	assert_non_null(r);
	agentrun_job_status_trace_id(r, st);
	json_object_put(r);
	return (json_object_get_string(jx_get(st, "traceID")));
}

static void
test_status_trace_id(void **state)
{
	static const char *bad[] = {
		"{}",
		"{\"otel.dev/traceparent\":\"\"}",
		"{\"otel.dev/"
		"traceparent\":\"00-4BF92F3577B34DA6A3CE929D0E0E4736"
		"-00f067aa0ba902b7-01\"}",
		"{\"otel.dev/"
		"traceparent\":\"00-00000000000000000000000000000000"
		"-00f067aa0ba902b7-01\"}",
		"{\"otel.dev/"
		"traceparent\":\"ff-4bf92f3577b34da6a3ce929d0e0e4736"
		"-00f067aa0ba902b7-01\"}",
		"{\"otel.dev/"
		"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736"
		"-00f067aa0ba902b7\"}",
	};
	json_object *st = json_object_new_object();

	(void)state;
	assert_string_equal(
	        trace_id_of(
	                "{\"otel.dev/traceparent\":\"00-4bf92f3577b34da6a3ce"
	                "929d0e0e4736-00f067aa0ba902b7-01\"}",
	                st),
	        "4bf92f3577b34da6a3ce929d0e0e4736");
	json_object_put(st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st = json_object_new_object();
		assert_null(trace_id_of(bad[i], st));
		json_object_put(st);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_agent_hooks_sandbox),
		cmocka_unit_test(test_sidecars),
		cmocka_unit_test(test_sandbox_default_image),
		cmocka_unit_test(test_host_volume_name),
		cmocka_unit_test(test_memory_skill),
		cmocka_unit_test(test_mcp),
		cmocka_unit_test(test_observability),
		cmocka_unit_test(test_pull_policy),
		cmocka_unit_test(test_status_trace_id),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
