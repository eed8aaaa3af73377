package org.securepush.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * A sealed push's record: {@code {"id", "preview"}} encrypted to the device's {@link SealingKey} with RFC 8291
 * ({@code aes128gcm}, one RFC 8188 record padded to a fixed size). {@link #open(SealingKey)} decrypts it with
 * {@code javax.crypto} alone: ECDH P-256, HKDF-SHA256, AES-128-GCM, padding removal.
 */
public final class SealedPush {
    private final String id;
    private final byte[] record;

    private SealedPush(String id, byte[] record) {
        this.id = id;
        this.record = record;
    }

    /** The {@code secureSealed} value of a push (unpadded base64url); {@code null} when it is not a record's shape. */
    public static SealedPush parse(String id, String base64Url) {
        byte[] record = base64Url == null ? null : Base64Url.decode(base64Url);
        if (record == null || !hasHeader(record)) return null;
        return new SealedPush(id, record);
    }

    /** The push's clear id: what is inside must name the same notification. */
    public String id() {
        return id;
    }

    // salt(16) | rs(4) | idlen(1) = 65 | key id: the sender's public key (65) | ciphertext and tag
    private static boolean hasHeader(byte[] record) {
        if (record.length < 86 + 17 || (record[20] & 0xff) != 65) return false;
        long recordSize = ((record[16] & 0xffL) << 24) | ((record[17] & 0xff) << 16) | ((record[18] & 0xff) << 8) | (record[19] & 0xff);
        return recordSize >= 18 && record.length - 86 <= recordSize;
    }

    /** Decrypts the record with {@code key}, strips its padding and checks that it names this push's id. */
    public SealedPreview open(SealingKey key) throws SealedPushException {
        if (key == null) throw new SealedPushException(SealedPushException.Reason.NO_SEALING_KEY);
        byte[] content = decrypt(record, key);
        JSONObject json;
        try {
            json = new JSONObject(new String(content, StandardCharsets.UTF_8));
        } catch (JSONException e) {
            throw new SealedPushException(SealedPushException.Reason.MALFORMED_CONTENT);
        }
        String inside = json.optString("id", "");
        if (!inside.equalsIgnoreCase(id)) throw new SealedPushException(SealedPushException.Reason.ID_MISMATCH);
        return new SealedPreview(id, json.optJSONObject("preview"));
    }

    /**
     * Opens one RFC 8291 {@code aes128gcm} record sealed to {@code key} (a sealed preview, or a whole Web Push /
     * UnifiedPush message body) and strips its RFC 8188 padding.
     */
    static byte[] decrypt(byte[] record, SealingKey key) throws SealedPushException {
        if (!hasHeader(record)) throw new SealedPushException(SealedPushException.Reason.MALFORMED_RECORD);
        byte[] salt = Arrays.copyOfRange(record, 0, 16);
        byte[] sender = Arrays.copyOfRange(record, 21, 86);
        byte[] ciphertext = Arrays.copyOfRange(record, 86, record.length);
        byte[] padded;
        try {
            byte[] shared = key.agree(sender);
            // IKM = HKDF(salt: auth, ikm: ECDH secret, info: "WebPush: info" 0x00 || ua_public || as_public, L: 32)
            byte[] ikm = hkdf(key.auth(), shared, concat(ascii("WebPush: info\0"), key.publicKey(), sender), 32);
            byte[] cek = hkdf(salt, ikm, ascii("Content-Encoding: aes128gcm\0"), 16);
            byte[] nonce = hkdf(salt, ikm, ascii("Content-Encoding: nonce\0"), 12);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(cek, "AES"), new GCMParameterSpec(128, nonce));
            padded = cipher.doFinal(ciphertext);
        } catch (GeneralSecurityException e) {
            throw new SealedPushException(SealedPushException.Reason.CANNOT_DECRYPT);
        }
        // RFC 8188 padding: content || 0x02 (the last record's delimiter) || 0x00...
        int delimiter = padded.length - 1;
        while (delimiter >= 0 && padded[delimiter] == 0) delimiter--;
        if (delimiter < 0 || padded[delimiter] != 2) throw new SealedPushException(SealedPushException.Reason.MALFORMED_CONTENT);
        return Arrays.copyOf(padded, delimiter);
    }

    /** HKDF-SHA256 (RFC 5869) for at most 32 bytes of output: one expand block. */
    static byte[] hkdf(byte[] salt, byte[] ikm, byte[] info, int length) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(salt, "HmacSHA256"));
        byte[] prk = mac.doFinal(ikm);
        mac.init(new SecretKeySpec(prk, "HmacSHA256"));
        mac.update(info);
        mac.update((byte) 1);
        return Arrays.copyOf(mac.doFinal(), length);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) length += part.length;
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }
}
