package org.securepush.client;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.util.Arrays;
import javax.crypto.KeyAgreement;

/**
 * The device's key for sealed previews: a P-256 key agreement key and a 16-byte auth secret, as RFC 8291
 * uses them. The server knows the public key and the auth secret and seals each preview to them; the private
 * key never leaves the device. This is the software key ({@code javax.crypto}); on API 31+ the
 * {@code KeystoreSealingKeys} adapter keeps the private key in the Android Keystore and agrees there.
 */
public final class SealingKey {
    /** An ECDH agreement done where the private key lives (the Android Keystore), never exporting it. */
    public interface Agreement {
        /** The shared secret with {@code senderPublicKey} (a 65-byte uncompressed P-256 point). */
        byte[] agree(byte[] senderPublicKey) throws GeneralSecurityException;
    }

    private final byte[] privateScalar;
    private final byte[] publicKey;
    private final byte[] auth;
    private final String alias;
    private final Agreement agreement;

    private SealingKey(byte[] privateScalar, byte[] publicKey, byte[] auth, String alias, Agreement agreement) {
        this.privateScalar = privateScalar;
        this.publicKey = publicKey;
        this.auth = auth;
        this.alias = alias;
        this.agreement = agreement;
    }

    /**
     * A key whose private half stays in a key store under {@code alias} ({@link SealingKeyStore}); {@code agreement}
     * does the ECDH there.
     */
    public static SealingKey held(String alias, byte[] publicKey, byte[] auth, Agreement agreement) {
        if (publicKey.length != 65 || publicKey[0] != 4 || auth.length != 16 || alias == null || agreement == null) {
            throw new IllegalArgumentException("a held sealing key has an alias, a 65-byte point, a 16-byte auth secret and an agreement");
        }
        return new SealingKey(null, publicKey.clone(), auth.clone(), alias, agreement);
    }

    /** The key store alias of a held key, or {@code null} for a software key. */
    public String alias() {
        return alias;
    }

    /** A new random key and auth secret. */
    public static SealingKey generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair pair = generator.generateKeyPair();
            byte[] scalar = fixed(((java.security.interfaces.ECPrivateKey) pair.getPrivate()).getS().toByteArray(), 32);
            byte[] auth = new byte[16];
            new SecureRandom().nextBytes(auth);
            return new SealingKey(scalar, uncompressed(((ECPublicKey) pair.getPublic()).getW()), auth, null, null);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("P-256 is not available", e);
        }
    }

    /** A stored key: its private scalar (32 bytes), public point (65 bytes, uncompressed) and auth secret (16). */
    public static SealingKey fromParts(byte[] privateScalar, byte[] publicKey, byte[] auth) {
        if (privateScalar.length != 32 || publicKey.length != 65 || publicKey[0] != 4 || auth.length != 16) {
            throw new IllegalArgumentException("a sealing key is a 32-byte scalar, a 65-byte point and a 16-byte auth secret");
        }
        return new SealingKey(privateScalar.clone(), publicKey.clone(), auth.clone(), null, null);
    }

    /** The public key in unpadded base64url: the {@code p256dh} the server seals to. */
    public String publicKeyBase64Url() {
        return Base64Url.encode(publicKey);
    }

    /** The auth secret in unpadded base64url. */
    public String authBase64Url() {
        return Base64Url.encode(auth);
    }

    /** The private scalar of a software key; {@code null} for a held key (it never leaves its store). */
    public byte[] privateScalar() {
        return privateScalar == null ? null : privateScalar.clone();
    }

    public byte[] publicKey() {
        return publicKey.clone();
    }

    public byte[] auth() {
        return auth.clone();
    }

    /** The ECDH shared secret with {@code senderPublicKey} (a 65-byte uncompressed point). */
    byte[] agree(byte[] senderPublicKey) throws GeneralSecurityException {
        if (agreement != null) return agreement.agree(senderPublicKey);
        ECParameterSpec p256 = p256();
        KeyFactory factory = KeyFactory.getInstance("EC");
        PrivateKey mine = factory.generatePrivate(new ECPrivateKeySpec(new BigInteger(1, privateScalar), p256));
        PublicKey theirs = factory.generatePublic(new ECPublicKeySpec(point(senderPublicKey), p256));
        KeyAgreement agreement = KeyAgreement.getInstance("ECDH");
        agreement.init(mine);
        agreement.doPhase(theirs, true);
        return agreement.generateSecret();
    }

    /** {@code uncompressed} (a 65-byte P-256 point) as a {@code java.security} public key, for an {@link Agreement}. */
    public static PublicKey publicKey(byte[] uncompressed) throws GeneralSecurityException {
        return KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(point(uncompressed), p256()));
    }

    static ECParameterSpec p256() throws GeneralSecurityException {
        AlgorithmParameters parameters = AlgorithmParameters.getInstance("EC");
        parameters.init(new ECGenParameterSpec("secp256r1"));
        return parameters.getParameterSpec(ECParameterSpec.class);
    }

    static ECPoint point(byte[] uncompressed) throws GeneralSecurityException {
        if (uncompressed.length != 65 || uncompressed[0] != 4) {
            throw new GeneralSecurityException("not an uncompressed P-256 point");
        }
        return new ECPoint(
                new BigInteger(1, Arrays.copyOfRange(uncompressed, 1, 33)), new BigInteger(1, Arrays.copyOfRange(uncompressed, 33, 65)));
    }

    /** A P-256 public key as the 65-byte uncompressed point the API takes ({@code p256dh}). */
    public static byte[] uncompressed(ECPublicKey key) {
        return uncompressed(key.getW());
    }

    static byte[] uncompressed(ECPoint point) {
        byte[] out = new byte[65];
        out[0] = 4;
        System.arraycopy(fixed(point.getAffineX().toByteArray(), 32), 0, out, 1, 32);
        System.arraycopy(fixed(point.getAffineY().toByteArray(), 32), 0, out, 33, 32);
        return out;
    }

    /** A big-endian integer's bytes as exactly {@code length} bytes (no sign byte, zero-padded). */
    static byte[] fixed(byte[] bytes, int length) {
        byte[] out = new byte[length];
        int copy = Math.min(bytes.length, length);
        System.arraycopy(bytes, bytes.length - copy, out, length - copy, copy);
        return out;
    }

    /** Never the private key. */
    @Override
    public String toString() {
        return "SealingKey(" + publicKeyBase64Url() + ")";
    }
}
